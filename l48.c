int f48(int x) { static volatile int v; v += x; return v + 48; }
