int f28(int x) { static volatile int v; v += x; return v + 28; }
