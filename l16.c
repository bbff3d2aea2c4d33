int f16(int x) { static volatile int v; v += x; return v + 16; }
