int f57(int x) { static volatile int v; v += x; return v + 57; }
