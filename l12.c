int f12(int x) { static volatile int v; v += x; return v + 12; }
