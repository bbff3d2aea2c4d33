/*
 * after_free.c - writes and reads a heap block, frees it, then reads it
 * again through a copy of its pointer: the names of its accesses change
 * from <malloc0000@main+N> to <freed:0000@main+N> (the same block).
 */
#include <stdlib.h>

static int *volatile kept;

int main(void)
{
    int *p = malloc(64);
    kept = p;
    p[0] = 1;
    int sum = kept[0];
    free(p);
    sum += kept[1]; /* after the free: the allocator's bytes now */
    return sum == 12345;
}
