/* Two globals side by side in one chunk, one hot (1000 loads and 1000
 * stores), one touched once; and a 40-byte heap block (16-aligned, so its
 * first chunk starts before it) stored byte by byte. */
#include <stdlib.h>

long cold_flag = 1;
long hot_counter = 2;

int main(void)
{
    for (long i = 0; i < 1000; i++)
        hot_counter += i;
    cold_flag = 0;
    volatile char *b = malloc(40);
    for (int i = 0; i < 40; i++)
        b[i] = (char)i;
    free((void *)b);
    return 0;
}
