/*
 * stub_holes.c - runs walk() (stub_holes_asm.S), WALK_STEPS blocks of a
 * pair of additions to a heap block's two ints, once; prints
 * the two sums (WALK_STEPS and 2 * WALK_STEPS).
 */
#include <stdio.h>
#include <stdlib.h>

void walk(int *p, int taken);

int main(void)
{
    int *p = calloc(2, sizeof *p);
    if (!p)
        return 1;
    walk(p, 0);
    printf("%d %d\n", p[0], p[1]);
    free(p);
    return 0;
}
