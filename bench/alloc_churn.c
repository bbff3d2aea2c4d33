/*
 * alloc_churn.c - allocation-heavy workload for measuring the heap
 * tracker: THREADS threads each make N malloc/free pairs of varying sizes,
 * keeping a window of 64 live blocks.  "alloc_churn N [THREADS]"
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static long per_thread;

static void *churn(void *arg)
{
    void *live[64] = { 0 };
    uintptr_t sum = (uintptr_t)arg;
    for (long i = 0; i < per_thread; i++) {
        int k = (int)(i & 63);
        free(live[k]);
        live[k] = malloc(16 + (size_t)(i * 7 % 500));
        sum += (uintptr_t)live[k] & 0xff;
    }
    for (int k = 0; k < 64; k++)
        free(live[k]);
    return (void *)sum;
}

int main(int argc, char **argv)
{
    per_thread = argc > 1 ? atol(argv[1]) : 1000000;
    int threads = argc > 2 ? atoi(argv[2]) : 1;
    pthread_t t[64];
    if (threads < 1 || threads > 64)
        return 2;
    for (int i = 0; i < threads; i++)
        pthread_create(&t[i], NULL, churn, (void *)(uintptr_t)i);
    uintptr_t total = 0;
    for (int i = 0; i < threads; i++) {
        void *r;
        pthread_join(t[i], &r);
        total += (uintptr_t)r;
    }
    printf("%lu\n", (unsigned long)(total & 0xffff));
    return 0;
}
