int f51(int x) { static volatile int v; v += x; return v + 51; }
