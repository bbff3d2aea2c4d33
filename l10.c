int f10(int x) { static volatile int v; v += x; return v + 10; }
