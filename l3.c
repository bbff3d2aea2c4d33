int f3(int x) { static volatile int v; v += x; return v + 3; }
