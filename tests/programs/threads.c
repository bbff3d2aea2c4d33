/* THREADS threads each allocate and free BLOCKS blocks of a size that
 * names the thread (1000 + thread index); memtap must record each exactly
 * once, on the thread that made it. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#define THREADS 4
#define BLOCKS 5000

static void *worker(void *arg)
{
    size_t size = 1000 + (size_t)(uintptr_t)arg;
    for (int i = 0; i < BLOCKS; i++) {
        void *p = malloc(size);
        if (!p)
            abort();
        *(volatile char *)p = 1;
        free(p);
    }
    return NULL;
}

int main(void)
{
    pthread_t t[THREADS];
    for (uintptr_t i = 0; i < THREADS; i++)
        if (pthread_create(&t[i], NULL, worker, (void *)i) != 0)
            return 1;
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    return 0;
}
