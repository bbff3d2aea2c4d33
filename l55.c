int f55(int x) { static volatile int v; v += x; return v + 55; }
