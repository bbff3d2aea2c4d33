/* Four threads, each filling and summing its own page-aligned heap array,
 * and adding its result to its own slot of a global array. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#define THREADS 4
#define N 2048

long results[THREADS * 8]; /* one cache line per thread */

static void *work(void *arg)
{
    intptr_t id = (intptr_t)arg;
    int *a = aligned_alloc(4096, N * sizeof *a);
    if (!a)
        return NULL;
    for (int i = 0; i < N; i++)
        a[i] = i + (int)id;
    long s = 0;
    for (int i = 0; i < N; i++)
        s += a[i];
    results[id * 8] = s;
    free(a);
    return NULL;
}

int main(void)
{
    pthread_t t[THREADS];
    for (intptr_t i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, work, (void *)i);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    return results[0] == 0;
}
