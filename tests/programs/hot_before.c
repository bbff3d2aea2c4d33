/*
 * hot_before.c - a load made hot first, on its own (a branch lands on
 * it), then a store of four bytes right before it, 3000 times: a jump
 * written over the store takes the load's jump bytes for its tail, and
 * the fault engine patches it too (it once refused it, the load's site
 * being closer than five bytes).
 */
#include <stdio.h>
#include <stdlib.h>

static int touch(int *p, int both)
{
    int got;
    __asm__ volatile("xor %%eax, %%eax\n\t"
                     "test %2, %2\n\t"
                     "jz 1f\n\t"
                     "movl %3, 0x10(%1,%%rax,1)\n\t" /* 4 bytes */
                     "1: movl 0x4(%1), %0"            /* 3 bytes */
                     : "=&c"(got)
                     : "r"(p), "r"(both), "r"(7)
                     : "rax", "memory");
    return got;
}

int main(void)
{
    int *p = calloc(16, sizeof *p);
    if (!p)
        return 1;
    long sum = 0;
    for (int i = 0; i < 1000; i++)
        sum += touch(p, 0);
    for (int i = 0; i < 3000; i++)
        sum += touch(p, 1);
    printf("%ld %d\n", sum, p[4]);
    free(p);
    return 0;
}
