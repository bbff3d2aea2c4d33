int f0(int x) { static volatile int v; v += x; return v + 0; }
