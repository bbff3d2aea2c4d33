int f13(int x) { static volatile int v; v += x; return v + 13; }
