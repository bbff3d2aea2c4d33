/* tested_parts.c - two functions over one heap block, for --tested with
 * ranges and functions (built at -O2, not inlined):
 *   checked_sum: 40 loads and 10 stores of the block  [the tested code]
 *   fresh_sum:   30 loads of the block               [the rest]
 * main's own accesses to the block: none. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) long checked_sum(volatile int *b)
{
    long sum = 0;
    for (int i = 0; i < 40; i++)
        sum += b[i & 7];
    for (int i = 0; i < 10; i++)
        b[8] = i;
    return sum;
}

__attribute__((noinline)) long fresh_sum(volatile int *b)
{
    long sum = 0;
    for (int i = 0; i < 30; i++)
        sum += b[(i & 7) + 1];
    return sum;
}

int main(void)
{
    volatile int *block = calloc(16, sizeof *block);
    if (!block)
        return 1;
    printf("%ld\n", checked_sum(block) + fresh_sum(block));
    free((void *)block);
    return 0;
}
