int f46(int x) { static volatile int v; v += x; return v + 46; }
