int f23(int x) { static volatile int v; v += x; return v + 23; }
