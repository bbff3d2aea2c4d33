/* Walks a 64 KiB static array line by line, twice, reading one int per
 * 64-byte line (1024 lines), then a 16 KiB one twice, then 9 lines 4 KiB
 * apart ten times round.  Every miss can be counted by hand for a 32 KiB
 * 8-way first level (64 sets) and a 1 MiB 16-way last level with 64-byte
 * lines, LRU:
 *   big: the first pass misses 1024 times in both levels (compulsory);
 *     the second misses 1024 times in the first level (a sequential walk
 *     over twice the cache evicts each line before it comes again: a
 *     fully associative cache of that size would too, so capacity) and
 *     never in the last;
 *   small: the first pass misses 256 times in both; the second hits;
 *   conflicting: its 9 lines share one first-level set of 8 ways, so
 *     every access misses there (9 compulsory, then 81 conflict misses: a
 *     fully associative cache would hold them); the last level spreads
 *     them over 9 sets and misses only the first 9. */
#include <stdio.h>

#define LINE 64
#define SET_SPAN 4096 /* 64 sets of 64-byte lines */
static volatile int big[65536 / sizeof(int)] __attribute__((aligned(LINE)));
static volatile int small[16384 / sizeof(int)] __attribute__((aligned(LINE)));
static volatile int conflicting[9 * SET_SPAN / sizeof(int)]
    __attribute__((aligned(SET_SPAN)));

int main(void)
{
    long sum = 0;
    for (int pass = 0; pass < 2; pass++)
        for (unsigned i = 0; i < sizeof big / sizeof *big; i += LINE / sizeof(int))
            sum += big[i];
    for (int pass = 0; pass < 2; pass++)
        for (unsigned i = 0; i < sizeof small / sizeof *small; i += LINE / sizeof(int))
            sum += small[i];
    for (int round = 0; round < 10; round++)
        for (unsigned i = 0; i < 9; i++)
            sum += conflicting[i * (SET_SPAN / sizeof(int))];
    printf("%ld\n", sum);
    return 0;
}
