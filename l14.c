int f14(int x) { static volatile int v; v += x; return v + 14; }
