/* A frame of 300 KiB: the stack grows below the mapping the process had
 * at start.  Touches every 64th byte of it and a global; prints the sum. */
#include <stdio.h>
#include <string.h>

long total;

static long deep(int seed)
{
    volatile char frame[300 * 1024];
    for (size_t i = 0; i < sizeof frame; i += 64)
        frame[i] = (char)(i + (size_t)seed);
    long sum = 0;
    for (size_t i = 0; i < sizeof frame; i += 64)
        sum += frame[i];
    return sum;
}

int main(int argc, char **argv)
{
    (void)argv;
    total = deep(argc);
    printf("%ld\n", total);
    return 0;
}
