/*
 * FlinkRestParse -- reads Sluice's REST answers with Apache Flink's own
 * response classes and Flink's strict JSON mapper (RestMapperUtils), as
 * Flink's REST client does. Input lines: "<url> <class> [<type parameter>]";
 * output: "OK <path> <class>" or "FAIL <path> <class>: <first line of why>".
 * Compiled and run by tests/integration/test_flink_cli.py against the
 * flink-dist jar of the installed apache-flink.
 */
import java.net.*; import java.io.*; import java.nio.charset.StandardCharsets;
import org.apache.flink.runtime.rest.util.RestMapperUtils;
public class FlinkRestParse {
  public static void main(String[] a) throws Exception {
    var m = RestMapperUtils.getStrictObjectMapper();
    var tf = m.getTypeFactory();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
    String line;
    while ((line = in.readLine()) != null) {
      String[] p = line.split(" ");
      String url = p[0], cls = p[1], param = p.length > 2 ? p[2] : null;
      String body;
      try (InputStream s = new URL(url).openStream()) { body = new String(s.readAllBytes(), StandardCharsets.UTF_8); }
      catch (Exception e) { System.out.println("HTTP-FAIL " + url + " " + e); continue; }
      try {
        Class<?> c = Class.forName(cls);
        Object o = param == null ? m.readValue(body, c) : m.readValue(body, tf.constructParametricType(c, Class.forName(param)));
        System.out.println("OK   " + url.replaceAll("http://[^/]+", "") + " " + c.getSimpleName());
      } catch (Throwable e) {
        String msg = String.valueOf(e.getMessage()); int nl = msg.indexOf('\n');
        System.out.println("FAIL " + url.replaceAll("http://[^/]+", "") + " " + cls.replaceAll(".*\\.", "") + ": " + (nl > 0 ? msg.substring(0, nl) : msg));
      }
    }
  }
}
