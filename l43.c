int f43(int x) { static volatile int v; v += x; return v + 43; }
