int f56(int x) { static volatile int v; v += x; return v + 56; }
