int f45(int x) { static volatile int v; v += x; return v + 45; }
