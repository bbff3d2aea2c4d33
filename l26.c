int f26(int x) { static volatile int v; v += x; return v + 26; }
