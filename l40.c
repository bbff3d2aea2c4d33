int f40(int x) { static volatile int v; v += x; return v + 40; }
