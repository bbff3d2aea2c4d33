int f9(int x) { static volatile int v; v += x; return v + 9; }
