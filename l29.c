int f29(int x) { static volatile int v; v += x; return v + 29; }
