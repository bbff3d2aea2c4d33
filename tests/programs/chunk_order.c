/* Three threads (main and two more) each run 8 rounds: a heap block of
 * 6000 ints from block_of(), 6000 stores into it, 6000 loads back, free.
 * A round's 12000 accesses fill more than a chunk of 4096 records (the
 * test sets MEMTAP_BUFFER_RECORDS), so full chunks go to memtap's writer
 * between the malloc and the free, the three threads' interleaved: in
 * the trace every access to a block lies between its malloc and its
 * free, 6000 stores then 6000 loads. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "fill_sum.h"

#define N 6000
#define ROUNDS 8

__attribute__((noinline)) int *block_of(void) { return malloc(N * sizeof(int)); }

static void *rounds(void *arg)
{
    long *sum = arg;
    for (int r = 0; r < ROUNDS; r++) {
        int *a = block_of();
        if (!a)
            return NULL;
        *sum += fill_and_sum(a, N);
        free(a);
    }
    return NULL;
}

int main(void)
{
    long sums[3] = { 0, 0, 0 };
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        if (pthread_create(&t[i], NULL, rounds, &sums[i + 1]))
            return 1;
    rounds(&sums[0]);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("%ld\n", sums[0] + sums[1] + sums[2]);
    return 0;
}
