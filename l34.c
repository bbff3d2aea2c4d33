int f34(int x) { static volatile int v; v += x; return v + 34; }
