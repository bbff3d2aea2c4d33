/* THREADS threads (argv[1], default 64) each allocate a block of 2000
 * longs, store to every element and load every element back (4000 heap
 * accesses each), then free it, all while the others run: under the fault
 * engine every one of THREADS * 4000 accesses must be recorded and no
 * window exposed. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define ELEMENTS 2000

static void *work(void *arg)
{
    volatile long *block = malloc(ELEMENTS * sizeof *block);
    long sum = 0;
    if (!block)
        return arg;
    for (int i = 0; i < ELEMENTS; i++)
        block[i] = i;
    for (int i = 0; i < ELEMENTS; i++)
        sum += block[i];
    free((void *)block);
    return sum == (long)ELEMENTS * (ELEMENTS - 1) / 2 ? NULL : arg;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 64;
    pthread_t *t = calloc((size_t)n, sizeof *t);
    int bad = 0;
    if (!t || n < 1)
        return 2;
    for (int i = 0; i < n; i++)
        if (pthread_create(&t[i], NULL, work, t) != 0)
            return 2;
    for (int i = 0; i < n; i++) {
        void *r;
        pthread_join(t[i], &r);
        bad += r != NULL;
    }
    free(t);
    printf("%d threads, %d wrong\n", n, bad);
    return bad != 0;
}
