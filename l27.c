int f27(int x) { static volatile int v; v += x; return v + 27; }
