int f11(int x) { static volatile int v; v += x; return v + 11; }
