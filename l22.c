int f22(int x) { static volatile int v; v += x; return v + 22; }
