int f21(int x) { static volatile int v; v += x; return v + 21; }
