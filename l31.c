int f31(int x) { static volatile int v; v += x; return v + 31; }
