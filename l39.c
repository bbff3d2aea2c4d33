int f39(int x) { static volatile int v; v += x; return v + 39; }
