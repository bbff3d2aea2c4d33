// bench/programs.py: a HashMap of 20,000 entries on the JVM (its JIT, or -Xint).
import java.util.*;
public class Hello {
  public static void main(String[] a) {
    HashMap<Integer,Integer> m = new HashMap<>();
    for (int i = 0; i < 20000; i++) m.put(i, i * 7 % 1000);
    long s = 0; for (int v : m.values()) s += v;
    System.out.println(s);
  }
}
