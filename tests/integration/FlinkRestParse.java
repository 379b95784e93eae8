/*
 * FlinkRestParse -- reads Sluice's REST answers with Apache Flink's own
 * response classes and Flink's strict JSON mapper (RestMapperUtils), as
 * Flink's REST client does. Input lines, tab-separated:
 *   <method> <url> <class> [<type parameter or -> [<JSON body>]]
 * (a body is sent as application/json, as Flink's client sends it).
 * Output: "OK   <method> <path> <class>" or "FAIL <method> <path> <class>:
 * <first line of why>" or "HTTP-FAIL ...". Compiled and run by
 * tests/integration/test_flink_cli.py against the flink-dist jar of the
 * installed apache-flink.
 */
import java.net.*; import java.io.*; import java.nio.charset.StandardCharsets;
import org.apache.flink.runtime.rest.util.RestMapperUtils;
public class FlinkRestParse {
  static final java.net.http.HttpClient HTTP = java.net.http.HttpClient.newHttpClient();
  static String call(String method, String url, String body) throws Exception {
    var b = java.net.http.HttpRequest.newBuilder(URI.create(url));
    /* as Flink's RestClient: every call that is not a GET is JSON, bodiless ones too */
    if (!method.equals("GET")) b.header("Content-Type", "application/json");
    b.method(method, body == null ? java.net.http.HttpRequest.BodyPublishers.noBody()
                                  : java.net.http.HttpRequest.BodyPublishers.ofString(body));
    var r = HTTP.send(b.build(), java.net.http.HttpResponse.BodyHandlers.ofString());
    if (r.statusCode() >= 400) throw new IOException("HTTP " + r.statusCode() + " " + r.body());
    return r.body();
  }
  public static void main(String[] a) throws Exception {
    var m = RestMapperUtils.getStrictObjectMapper();
    var tf = m.getTypeFactory();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      if (line.isBlank()) continue;
      String[] p = line.split("\t");
      String method = p[0], url = p[1], cls = p[2];
      String param = p.length > 3 && !p[3].equals("-") ? p[3] : null;
      String sent = p.length > 4 ? p[4] : null;
      String path = url.replaceAll("http://[^/]+", "");
      String body;
      try { body = call(method, url, sent); }
      catch (Exception e) { System.out.println("HTTP-FAIL " + method + " " + path + " " + e); continue; }
      try {
        Class<?> c = Class.forName(cls);
        if (param == null) m.readValue(body, c);
        else m.readValue(body, tf.constructParametricType(c, Class.forName(param)));
        System.out.println("OK   " + method + " " + path + " " + c.getSimpleName());
      } catch (Throwable e) {
        String msg = String.valueOf(e.getMessage()); int nl = msg.indexOf('\n');
        System.out.println("FAIL " + method + " " + path + " " + cls.replaceAll(".*\\.", "") + ": "
                           + (nl > 0 ? msg.substring(0, nl) : msg));
      }
    }
  }
}
