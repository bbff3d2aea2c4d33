int f41(int x) { static volatile int v; v += x; return v + 41; }
