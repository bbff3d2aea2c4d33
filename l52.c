int f52(int x) { static volatile int v; v += x; return v + 52; }
