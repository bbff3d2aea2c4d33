int f25(int x) { static volatile int v; v += x; return v + 25; }
