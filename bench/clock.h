/*
 * clock.h - the standalone benchmarks' clock: seconds on CLOCK_MONOTONIC.
 */
#ifndef MEMTAP_BENCH_CLOCK_H
#define MEMTAP_BENCH_CLOCK_H

#include <time.h>

static inline double bench_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

#endif
