int f36(int x) { static volatile int v; v += x; return v + 36; }
