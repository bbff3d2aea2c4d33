int f1(int x) { static volatile int v; v += x; return v + 1; }
