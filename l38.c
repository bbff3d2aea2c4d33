int f38(int x) { static volatile int v; v += x; return v + 38; }
