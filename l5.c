int f5(int x) { static volatile int v; v += x; return v + 5; }
