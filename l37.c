int f37(int x) { static volatile int v; v += x; return v + 37; }
