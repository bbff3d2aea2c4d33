/*
 * dropped_window.c - calls step() (dropped_window_asm.S) both ways: into
 * its window past the jump (skip) and through it; prints the sum.
 */
#include <stdio.h>
#include <stdlib.h>

int before(int), after(int), step(const int *p, int skip);

int main(int argc, char **argv)
{
    (void)argv;
    int *v = malloc(sizeof *v);
    if (!v)
        return 1;
    *v = argc + 19;
    long sum = before(1) + after(2);
    for (int i = 0; i < 1000; i++)
        sum += step(v, i & 1);
    printf("%ld\n", sum);
    free(v);
    return 0;
}
