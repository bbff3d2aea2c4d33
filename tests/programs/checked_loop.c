/* checked_loop.c - THREADS threads (argv[1], default 4) each load the 64
 * ints of one zeroed heap block 250,000 times through one load
 * instruction, while the others run, and store the sum (0) into their own
 * slot: under uninit --check-once that load passes its check at once and
 * a rewritten copy stops logging it. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define ROUNDS 250000

static volatile int *data;
static long sums[64];

static void *work(void *arg)
{
    long i = (long)arg, sum = 0;
    for (int k = 0; k < ROUNDS; k++)
        sum += data[k & 63];
    sums[i] = sum;
    return NULL;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 4;
    pthread_t t[64];
    if (n < 1 || n > 64 || !(data = calloc(64, sizeof *data)))
        return 2;
    for (long i = 0; i < n; i++)
        if (pthread_create(&t[i], NULL, work, (void *)i) != 0)
            return 2;
    long total = 0;
    for (int i = 0; i < n; i++) {
        pthread_join(t[i], NULL);
        total += sums[i];
    }
    printf("%d threads, sum %ld\n", n, total);
    free((void *)data);
    return 0;
}
