/* window_pairs.c - what recording costs beyond logging, measured inside
 * one process so that the machine's drift cancels out: a walk over 1 M
 * nodes in random order (each step a dependent load that misses, one
 * logged entry a step; bench/rewrite_workloads' walk without its set-up).
 * Run as a rewritten copy under memtap run (bench/window_pairs.py): the
 * program marks its own window (memtap_start, memtap_stop), so its
 * rewritten code logs every access all along but hands the entries to
 * the trace only while the window is open.  Each round walks 1 M steps
 * with the window open and 1 M with it closed, in turns of which goes
 * first; the median of the rounds' differences is what packing,
 * compressing and writing the entries costs the program's thread a step.
 * Run natively it measures the method's own bias (both halves alike).
 *
 * Only a program whose recording keeps up can be measured so: a writer
 * still busy when the window closes would slow the closed half instead.
 *
 *   window_pairs [ROUNDS] */
#include <stdio.h>
#include <stdlib.h>
#include "clock.h"

#include "memtap/memtap.h"

enum { NODES = 1 << 20, STEPS = 1 << 20, MAX_ROUNDS = 99 };

typedef struct node {
    struct node *next;
    long value;
} node;

static unsigned lcg(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return *s >> 8;
}

static const node *p; /* the walk goes on where it stopped */
static long sum;

static node *walk_setup(void)
{
    node *nodes = malloc(NODES * sizeof *nodes);
    unsigned *order = malloc(NODES * sizeof *order);
    if (!nodes || !order)
        exit(1);
    unsigned s = 777;
    for (unsigned i = 0; i < NODES; i++)
        order[i] = i;
    for (unsigned i = NODES - 1; i > 0; i--) { /* one cycle through all */
        unsigned j = lcg(&s) % (i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (unsigned i = 0; i < NODES; i++) {
        nodes[order[i]].next = &nodes[order[(i + 1) % NODES]];
        nodes[order[i]].value = i;
    }
    p = &nodes[order[0]];
    free(order);
    return nodes;
}

static void walk_half(void)
{
    for (long k = 0; k < STEPS; k++) {
        sum += p->value;
        p = p->next;
    }
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 31;
    if (rounds < 1 || rounds > MAX_ROUNDS) {
        fprintf(stderr, "usage: window_pairs [ROUNDS, 1 to %d]\n", MAX_ROUNDS);
        return 2;
    }
    node *nodes = walk_setup();
    double d[MAX_ROUNDS], t[2] = { 0, 0 };
    for (int r = 0; r < rounds; r++) {
        for (int k = 0; k < 2; k++) {
            int open = (r + k) % 2 == 0;
            if (open)
                MEMTAP_START();
            else
                MEMTAP_STOP();
            double a = bench_now();
            walk_half();
            t[open] = bench_now() - a;
        }
        d[r] = (t[1] - t[0]) / STEPS * 1e9;
    }
    MEMTAP_STOP();
    qsort(d, (size_t)rounds, sizeof *d, by_value);
    printf("window open minus closed: %.2f ns a step (quartiles %.2f, %.2f; "
           "%d rounds of %d steps a half, checksum %ld)\n",
           d[rounds / 2], d[rounds / 4], d[3 * rounds / 4], rounds, STEPS,
           sum);
    free(nodes);
    return 0;
}
