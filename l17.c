int f17(int x) { static volatile int v; v += x; return v + 17; }
