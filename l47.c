int f47(int x) { static volatile int v; v += x; return v + 47; }
