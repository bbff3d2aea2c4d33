int f24(int x) { static volatile int v; v += x; return v + 24; }
