/* Walks a 64 KiB static array line by line, twice, reading one int per
 * 64-byte line (1024 lines), then a 16 KiB one twice.  Every miss can be
 * counted by hand for a 32 KiB 8-way first level and a 1 MiB last level
 * with 64-byte lines, LRU: big's first pass misses 1024 times in both
 * levels (compulsory); its second pass misses 1024 times in the first
 * level (a sequential walk over twice the cache evicts each line before
 * it comes again) and never in the last; small's first pass misses 256
 * times in both; its second pass hits (16 KiB fits). */
#include <stdio.h>

#define LINE 64
static volatile int big[65536 / sizeof(int)] __attribute__((aligned(LINE)));
static volatile int small[16384 / sizeof(int)] __attribute__((aligned(LINE)));

int main(void)
{
    long sum = 0;
    for (int pass = 0; pass < 2; pass++)
        for (unsigned i = 0; i < sizeof big / sizeof *big; i += LINE / sizeof(int))
            sum += big[i];
    for (int pass = 0; pass < 2; pass++)
        for (unsigned i = 0; i < sizeof small / sizeof *small; i += LINE / sizeof(int))
            sum += small[i];
    printf("%ld\n", sum);
    return 0;
}
