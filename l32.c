int f32(int x) { static volatile int v; v += x; return v + 32; }
