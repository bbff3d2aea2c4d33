int f53(int x) { static volatile int v; v += x; return v + 53; }
