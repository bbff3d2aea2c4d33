/* regions.c - a known number of accesses to each kind of memory, for the
 * bypass rules (built at -O2: the local array is addressed from rsp, the
 * globals RIP-relative, the heap block through a register):
 *   local (stack, from rsp):          100 stores   [stack]
 *   table[3] (read-only, RIP-relative): 50 loads   [read-only]
 *   counters[1] (data, RIP-relative):   30 stores  [static]
 *   block[2] (heap):                    20 stores  [heap]
 */
#include <stdio.h>
#include <stdlib.h>

static const int table[64] = { 1, 2, 3, 4, 5, 6, 7, 8 };
volatile int counters[8];

int main(int argc, char **argv)
{
    (void)argv;
    volatile int local[16];
    volatile int *block = malloc(64);
    long sum = 0;
    for (int i = 0; i < 100; i++)
        local[(i + argc) & 15] = i; /* mark: stack */
    for (int i = 0; i < 50; i++)
        sum += *(const volatile int *)&table[3]; /* mark: read-only */
    for (int i = 0; i < 30; i++)
        counters[1] = i; /* mark: static */
    for (int i = 0; i < 20; i++)
        block[2] = i; /* mark: heap */
    printf("%ld %d\n", sum, local[argc & 15]);
    free((void *)block);
    return 0;
}
