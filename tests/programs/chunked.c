/* A global array of structs, 256 bytes, of which main writes and reads
 * every int of the first K rows (K its argument, at most 16): memtap
 * accuracy divides the array into chunks of C bytes by offset in the
 * variable (16 * K / C of them touched), whatever its fields. */
#include <stdlib.h>

struct row {
    int a;
    int b[3];
};

struct row rows[16];

int main(int argc, char **argv)
{
    int k = argc > 1 ? atoi(argv[1]) : 16;
    if (k < 0 || k > 16)
        return 2;
    for (int i = 0; i < k; i++) {
        rows[i].a = i;
        for (int j = 0; j < 3; j++)
            rows[i].b[j] = i + j;
    }
    long sum = 0;
    for (int i = 0; i < k; i++)
        sum += rows[i].a + rows[i].b[0] + rows[i].b[1] + rows[i].b[2];
    return sum != 2L * k * k + k; /* the sum of 4i + 3 over i < k */
}
