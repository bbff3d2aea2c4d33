int f15(int x) { static volatile int v; v += x; return v + 15; }
