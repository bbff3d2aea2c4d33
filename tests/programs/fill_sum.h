/*
 * fill_sum.h - the loops of the programs whose every heap access the
 * tests know (fork_work.c, chunk_order.c): n stores into a block, then n
 * loads back, from fill_and_sum, each one an access of its own.
 */
#ifndef MEMTAP_TESTS_FILL_SUM_H
#define MEMTAP_TESTS_FILL_SUM_H

__attribute__((noinline)) static long fill_and_sum(volatile int *a, int n)
{
    long sum = 0;
    for (int i = 0; i < n; i++)
        a[i] = i;
    for (int i = 0; i < n; i++)
        sum += a[i];
    return sum;
}

#endif
