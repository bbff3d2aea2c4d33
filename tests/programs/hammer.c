/* THREADS threads hammer one shared page of globals: each adds to its own
 * counter ROUNDS times, all counters on the same page.  Under memtap a
 * window opened by one thread exposes the page to the others: the trace
 * must count every such window. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#define THREADS 4
#define ROUNDS 3000

volatile long shared[THREADS];

static void *hammer(void *arg)
{
    intptr_t id = (intptr_t)arg;
    for (int i = 0; i < ROUNDS; i++)
        shared[id] = shared[id] + 1;
    return NULL;
}

int main(void)
{
    pthread_t t[THREADS];
    for (intptr_t i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, hammer, (void *)i);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    long total = 0;
    for (int i = 0; i < THREADS; i++)
        total += shared[i];
    printf("%ld\n", total);
    return total != THREADS * ROUNDS;
}
