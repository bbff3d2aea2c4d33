/* heat_counts.c - a known number of accesses per 64-byte chunk, for
 * `memtap heat` (the block is 128-byte aligned, so that 64- and 128-byte
 * chunks both start at its start).  Built at -O0: every access below is
 * one instruction, and the locals live on the stack, which the fault
 * engine does not trace.
 *   block chunk 0: 10 stores      block chunk 1: 20 loads
 *   block chunk 2: 5 x (load + store) = 10      block chunk 3: none
 *   hot_global (its own chunk): 7 stores
 */
#include <stdio.h>
#include <stdlib.h>

_Alignas(64) volatile int hot_global[16];

int main(void)
{
    volatile int *p = aligned_alloc(128, 256);
    int sum = 0;
    for (int i = 0; i < 10; i++)
        p[0] = i;
    for (int i = 0; i < 20; i++)
        sum += p[16];
    for (int i = 0; i < 5; i++)
        p[32] = p[32] + 1;
    for (int i = 0; i < 7; i++)
        hot_global[0] = i;
    free((void *)p);
    (void)sum;
    puts("done");
    return 0;
}
