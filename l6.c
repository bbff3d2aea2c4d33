int f6(int x) { static volatile int v; v += x; return v + 6; }
