/* Per-block truth for `memtap report`: main allocates one block that two
 * threads then write, each its own word, and main reads (one block, three
 * threads, two writers); each thread also allocates a block of its own
 * at one site, writes and reads it and frees it (that site's blocks are
 * touched by one thread each, though two threads use the site). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static long *shared;

static void *work(void *arg)
{
    long i = (long)arg;
    shared[i] = i + 1;
    volatile long *own = malloc(64);
    if (!own)
        abort();
    own[0] = i;
    long v = own[0];
    free((void *)own);
    return (void *)v;
}

int main(void)
{
    shared = malloc(2 * sizeof *shared);
    if (!shared)
        return 1;
    pthread_t t[2];
    for (long i = 0; i < 2; i++)
        if (pthread_create(&t[i], NULL, work, (void *)i) != 0)
            return 1;
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("%ld\n", shared[0] + shared[1]);
    free(shared);
    return 0;
}
