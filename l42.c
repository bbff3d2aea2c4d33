int f42(int x) { static volatile int v; v += x; return v + 42; }
