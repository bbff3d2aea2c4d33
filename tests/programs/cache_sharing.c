/* Two threads take turns (a flag in a line of its own) ROUNDS times; in
 * its turn each writes its own word of `neighbours` (one line: false
 * sharing) and the one word `both` (true sharing).  With a first level
 * per thread that a write of the other thread invalidates, counted by
 * hand for `neighbours` and for `both` alike: each thread's first write
 * misses (compulsory, 2), every later one finds its copy taken by the
 * other's write in between (2 * (ROUNDS - 1) coherence misses: of
 * `neighbours` false sharing, the bytes the other wrote are not the
 * writer's; of `both` true sharing); main's read of each after the
 * threads end is its first use of the line (compulsory: 3 in all). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#define ROUNDS 100

struct pair {
    _Alignas(64) volatile int left;
    volatile int right;
};

static struct pair neighbours;
static _Alignas(64) volatile int both;
static _Alignas(64) atomic_int turn;

static void *player(void *arg)
{
    int me = (int)(long)arg;
    for (int i = 0; i < ROUNDS; i++) {
        while (atomic_load(&turn) != me)
            ;
        if (me)
            neighbours.right = i;
        else
            neighbours.left = i;
        both = i;
        atomic_store(&turn, !me);
    }
    return NULL;
}

int main(void)
{
    pthread_t a, b;
    pthread_create(&a, NULL, player, (void *)0L);
    pthread_create(&b, NULL, player, (void *)1L);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("%d %d\n", neighbours.left + neighbours.right, both);
    return 0;
}
