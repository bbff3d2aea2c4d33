/*
 * log_path_bench.c - what a logged access costs the program's thread, by
 * log sequence (log_path_bench.S): rewrite ABI 8's and 9's stubs, and
 * trampolines that write their entries themselves (ABI 10), in a loop of stores to
 * random lines and in a walk of dependent loads, with none or all of the
 * scratch registers live.  Prints ns per access over the loop alone,
 * median of RUNS, all variants interleaved in each run.
 *
 *   log_path_bench [RUNS]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "clock.h"

enum { CELLS = 1 << 22, NODES = 1 << 20, STEPS = 1 << 23, MAX_RUNS = 31 };

__thread uint64_t lp_cursor, lp_room;
uint64_t lp_buffer; /* entries from here to a 64 KiB boundary */
extern uint64_t lp_tlsoff; /* the cursor's offset from the thread pointer */

#define VARIANT(k, s)                                                        \
    void scatter_##k##_##s(const unsigned *, long, long *);                  \
    long walk_##k##_##s(const long *, long);
VARIANT(native, 0)
VARIANT(off, 0) VARIANT(off, 3) VARIANT(abi8, 0) VARIANT(abi8, 3)
VARIANT(abi9, 0) VARIANT(abi9, 3) VARIANT(inline, 0) VARIANT(inline, 3)
VARIANT(abi10, 0) VARIANT(abi10, 3)

static const struct variant {
    const char *name;
    void (*scatter)(const unsigned *, long, long *);
    long (*walk)(const long *, long);
} variants[] = {
#define V(k, s, label) { label, scatter_##k##_##s, walk_##k##_##s }
    V(native, 0, "native"),
    V(off, 0, "stub off, none live"),  V(off, 3, "stub off, all live"),
    V(abi8, 0, "ABI 8, none live"),    V(abi8, 3, "ABI 8, all live"),
    V(abi9, 0, "ABI 9, none live"),    V(abi9, 3, "ABI 9, all live"),
    V(inline, 0, "inline, none live"), V(inline, 3, "inline, all live"),
    V(abi10, 0, "ABI 10, none live"),  V(abi10, 3, "ABI 10, all live"),
#undef V
};
enum { NV = sizeof variants / sizeof *variants };

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void shuffle(unsigned *v, unsigned n)
{
    unsigned s = 777;
    for (unsigned i = 0; i < n; i++)
        v[i] = i;
    for (unsigned i = n - 1; i > 0; i--) {
        s = s * 1103515245u + 12345u;
        unsigned j = (s >> 8) % (i + 1), t = v[i];
        v[i] = v[j];
        v[j] = t;
    }
}

static void reset_log(void)
{
    lp_cursor = lp_buffer;
    lp_room = 4095;
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 7;
    if (runs < 1 || runs > MAX_RUNS) {
        fprintf(stderr, "usage: log_path_bench [RUNS, 1 to %d]\n", MAX_RUNS);
        return 2;
    }
    unsigned *order = malloc(CELLS * sizeof *order);
    long *cells = malloc(2 * (size_t)CELLS * sizeof *cells);
    unsigned *cycle = malloc(NODES * sizeof *cycle);
    long *nodes = malloc(2 * (size_t)NODES * sizeof *nodes);
    char *buf = aligned_alloc(65536, 65536);
    if (!order || !cells || !cycle || !nodes || !buf)
        return 1;
    memset(buf, 0, 65536);
    memset(cells, 0, 2 * (size_t)CELLS * sizeof *cells);
    lp_buffer = (uint64_t)(uintptr_t)buf + 16;
    lp_tlsoff = (uint64_t)((char *)&lp_cursor -
                           (char *)__builtin_thread_pointer());
    shuffle(order, CELLS);
    shuffle(cycle, NODES); /* one cycle through all nodes */
    for (unsigned i = 0; i < NODES; i++) {
        nodes[2 * cycle[i]] = (long)(uintptr_t)&nodes[2 * cycle[(i + 1) % NODES]];
        nodes[2 * cycle[i] + 1] = i;
    }
    static double t[2][NV][MAX_RUNS];
    long check = 0;
    for (int r = 0; r < runs; r++)
        for (int v = 0; v < NV; v++) {
            reset_log();
            double a = bench_now();
            variants[v].scatter(order, CELLS, cells);
            double b = bench_now();
            check += variants[v].walk(&nodes[2 * cycle[0]], STEPS);
            t[0][v][r] = b - a;
            t[1][v][r] = bench_now() - b;
        }
    printf("%-22s %12s %12s\n", "log sequence", "scatter", "walk");
    double base[2] = { 0, 0 };
    for (int v = 0; v < NV; v++) {
        printf("%-22s", variants[v].name);
        for (int k = 0; k < 2; k++) {
            qsort(t[k][v], (size_t)runs, sizeof(double), by_value);
            double m = t[k][v][runs / 2], per = m / (k ? STEPS : CELLS) * 1e9;
            if (v == 0)
                base[k] = per;
            printf(v ? " %+9.2f ns" : " %9.2f ns", v ? per - base[k] : per);
        }
        printf("\n");
    }
    printf("(native: ns per access; the others: ns more per access; "
           "median of %d, checksum %ld)\n", runs, check);
    return 0;
}
