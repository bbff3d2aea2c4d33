/*
 * lk_live_edges.c - drives lk_live_edges_asm.S: loads in blocks whose
 * scratch registers (rax, rcx, rdx) are needed only after a branch, a
 * loop or a jump, so that a rewritten copy that saved too few of them
 * prints other sums than the original.
 */
#include <stdio.h>

long after_branch(const long *p, long n, long c, long d);
long loop_sum(const long *p, long n, long c, long d);
long jump_back(const long *p, long n, long c, long d);
long tail(const long *p, long n, long c, long d);
long before_call(const long *p, long n, long c, long d);
long through_pointer(const long *p, long (*f)(const long *));
long falls_in(const long *p, long n, long c, long d);

static long first(const long *p)
{
    return *p * 7;
}

int main(void)
{
    static long a[8] = { 0, 3, 5, 7, 11, 13, 17, 19 };
    long s = 0;
    for (long r = 0; r < 4; r++) {
        s = s * 31 + after_branch(&a[r], 0, 1000 + r, 100000 + r);
        s = s * 31 + loop_sum(a, 5 + r, 0, 10 + r);
        s = s * 31 + jump_back(&a[r + 1], 0, 3, 40 + r);
        s = s * 31 + tail(&a[r + 1], 0, 7, 9);
        s = s * 31 + before_call(&a[r + 2], 0, 0, 0);
        s = s * 31 + through_pointer(&a[r + 3], first);
        s = s * 31 + falls_in(&a[r + 4], 1 + r, 500 + r, 0);
    }
    printf("%ld\n", s);
    return 0;
}
