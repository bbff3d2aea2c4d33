/*
 * lk_block_edges.c - drives lk_block_edges_asm.S: loads whose basic block
 * is too short for a jump, reached by falling through a branch, by
 * branches with a rel32, by short branches, by calls (direct and
 * indirect) and by returns.  Each
 * function runs ROUNDS times over an array of N longs; the result is
 * printed, so that a rewritten copy can be checked against the original.
 */
#include <stdio.h>

long loop_head(const long *p, long n);
long short_entry(const long *p, long n);
long tiny_load(const long *p);
long after_call(const long *p);
long padded_load(const long *p);
long island_load(const long *p);
long no_load(void);

#define N 50
#define ROUNDS 4

int main(void)
{
    static long a[N];
    for (long i = 0; i < N; i++)
        a[i] = i * 3 + 1;
    long (*volatile indirect)(const long *) = padded_load;
    long s = no_load();
    for (int r = 0; r < ROUNDS; r++) {
        s += loop_head(a, N);
        s += short_entry(a, N);
        s += tiny_load(&a[r]);
        s += after_call(&a[r + 1]);
        s += indirect(&a[r + 2]);
        s += island_load(&a[r + 3]);
    }
    printf("%ld\n", s);
    return 0;
}
