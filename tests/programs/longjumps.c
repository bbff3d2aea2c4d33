/* longjumps.c - for the rewriter's corpus: setjmp/longjmp out of deep
 * recursion, qsort with a comparison through a function pointer, and a
 * signal handler that longjmps back (siglongjmp). */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static jmp_buf out;
static sigjmp_buf from_signal;
static int depth_seen[64];

static int dive(int depth, int limit)
{
    depth_seen[depth & 63]++;
    if (depth == limit)
        longjmp(out, depth);
    if (depth > 1000)
        return 0;
    return dive(depth + 1, limit) + 1;
}

static int by_value(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static void on_usr1(int sig)
{
    (void)sig;
    siglongjmp(from_signal, 7);
}

int main(void)
{
    int total = 0;
    for (int limit = 5; limit < 40; limit += 7) {
        int r = setjmp(out);
        if (r == 0)
            dive(0, limit);
        total += r;
    }
    int v[100];
    for (int i = 0; i < 100; i++)
        v[i] = (i * 7919) % 101;
    qsort(v, 100, sizeof *v, by_value);
    signal(SIGUSR1, on_usr1);
    int s = sigsetjmp(from_signal, 1);
    if (s == 0)
        raise(SIGUSR1);
    long seen = 0;
    for (int i = 0; i < 64; i++)
        seen += depth_seen[i] * (i + 1);
    printf("total %d sorted %d %d %d signal %d seen %ld\n", total, v[0], v[50],
           v[99], s, seen);
    return 0;
}
