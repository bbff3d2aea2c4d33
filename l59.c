int f59(int x) { static volatile int v; v += x; return v + 59; }
