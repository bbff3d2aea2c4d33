int f35(int x) { static volatile int v; v += x; return v + 35; }
