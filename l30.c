int f30(int x) { static volatile int v; v += x; return v + 30; }
