int f18(int x) { static volatile int v; v += x; return v + 18; }
