int f19(int x) { static volatile int v; v += x; return v + 19; }
