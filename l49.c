int f49(int x) { static volatile int v; v += x; return v + 49; }
