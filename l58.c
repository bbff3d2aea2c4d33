int f58(int x) { static volatile int v; v += x; return v + 58; }
