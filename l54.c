int f54(int x) { static volatile int v; v += x; return v + 54; }
