int f50(int x) { static volatile int v; v += x; return v + 50; }
