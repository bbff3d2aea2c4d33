int f20(int x) { static volatile int v; v += x; return v + 20; }
