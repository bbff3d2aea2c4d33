int f33(int x) { static volatile int v; v += x; return v + 33; }
