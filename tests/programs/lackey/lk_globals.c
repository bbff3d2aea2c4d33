/* Globals (data and bss): arrays, a struct, scalars, in loops. */
int table[64] = { 1, 2, 3 };
long counters[8];
struct point { int x, y, z; } origin = { 1, 2, 3 }, points[16];
static double scale = 1.5;

int main(void)
{
    for (int i = 0; i < 64; i++)
        table[i] = table[i] * 2 + i;
    for (int i = 0; i < 16; i++) {
        points[i].x = origin.x + i;
        points[i].y = origin.y * i;
        points[i].z = (int)(scale * points[i].x);
    }
    for (int i = 0; i < 64; i++)
        counters[table[i] % 8]++;
    return counters[0] == 12345;
}
