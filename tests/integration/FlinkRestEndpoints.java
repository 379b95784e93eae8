/*
 * FlinkRestEndpoints -- lists the REST endpoints of Apache Flink's own jar:
 * every concrete MessageHeaders class under org.apache.flink.runtime (the
 * dispatcher's, the jar API's, the cluster's), found by reflection, as
 * Flink's documentation generator finds them. One line each, tab-separated:
 *   <method> <url template> <response class> <type parameter or -> <headers class>
 * (UntypedResponseMessageHeaders -- logs, stdout, profiling files -- answer
 * with a file, not JSON: "<file>" as the response class). Run by
 * tests/integration/test_flink_rest_surface.py against the flink-dist jar.
 */
import java.lang.reflect.*;
import java.util.*;
import java.util.jar.*;
import org.apache.flink.runtime.rest.messages.MessageHeaders;
import org.apache.flink.runtime.rest.messages.UntypedResponseMessageHeaders;
public class FlinkRestEndpoints {
  static Object instance(Class<?> c) throws Exception {
    try { Method m = c.getMethod("getInstance"); if (Modifier.isStatic(m.getModifiers())) return m.invoke(null); }
    catch (NoSuchMethodException e) { }
    for (Field f : c.getFields())
      if (Modifier.isStatic(f.getModifiers()) && c.isAssignableFrom(f.getType())) return f.get(null);
    Constructor<?> k = c.getDeclaredConstructor(); k.setAccessible(true); return k.newInstance();
  }
  public static void main(String[] a) throws Exception {
    TreeSet<String> out = new TreeSet<>();
    try (JarFile jar = new JarFile(a[0])) {
      for (Enumeration<JarEntry> en = jar.entries(); en.hasMoreElements(); ) {
        String n = en.nextElement().getName();
        if (!n.startsWith("org/apache/flink/runtime/") || !n.endsWith("Headers.class")) continue;
        Class<?> c;
        try { c = Class.forName(n.replace('/', '.').replace(".class", ""), false, FlinkRestEndpoints.class.getClassLoader()); }
        catch (Throwable t) { continue; }
        if (!UntypedResponseMessageHeaders.class.isAssignableFrom(c) || c.isInterface()
            || Modifier.isAbstract(c.getModifiers())) continue;
        Object h;
        try { h = instance(c); } catch (Throwable t) { System.err.println("skip " + c.getName() + ": " + t); continue; }
        var u = (UntypedResponseMessageHeaders<?, ?>) h;
        String method = u.getHttpMethod().name(), resp = "<file>", param = "-";
        if (h instanceof MessageHeaders) {
          var m = (MessageHeaders<?, ?, ?>) h;
          resp = m.getResponseClass().getName();
          Collection<Class<?>> ps = m.getResponseTypeParameters();
          if (ps != null && !ps.isEmpty()) param = ps.iterator().next().getName();
        }
        out.add(method + "\t" + u.getTargetRestEndpointURL() + "\t" + resp + "\t" + param + "\t" + c.getName());
      }
    }
    out.forEach(System.out::println);
  }
}
