int f7(int x) { static volatile int v; v += x; return v + 7; }
