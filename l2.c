int f2(int x) { static volatile int v; v += x; return v + 2; }
