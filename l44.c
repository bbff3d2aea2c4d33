int f44(int x) { static volatile int v; v += x; return v + 44; }
