int f8(int x) { static volatile int v; v += x; return v + 8; }
