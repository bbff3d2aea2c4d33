int f4(int x) { static volatile int v; v += x; return v + 4; }
