/*
 * lk_block_edges.c - drives lk_block_edges_asm.S: loads whose basic block
 * is too short for a jump, reached by falling through a branch, by
 * branches with a rel32, by a loop's short back edge and by calls.  Each
 * function runs ROUNDS times over an array of N longs; the result is
 * printed, so that a rewritten copy can be checked against the original.
 */
#include <stdio.h>

long loop_head(const long *p, long n);
long short_entry(const long *p, long n);
long tiny_load(const long *p);

#define N 50
#define ROUNDS 4

int main(void)
{
    static long a[N];
    for (long i = 0; i < N; i++)
        a[i] = i * 3 + 1;
    long s = 0;
    for (int r = 0; r < ROUNDS; r++) {
        s += loop_head(a, N);
        s += short_entry(a, N);
        s += tiny_load(&a[r]);
    }
    printf("%ld\n", s);
    return 0;
}
