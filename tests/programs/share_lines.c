/* share_lines.c - for `memtap share`: two threads write neighbouring words
 * of one cache line (false sharing), and both read a word main wrote
 * (true sharing).  Nothing else of the program's own data is touched by
 * more than one thread.
 */
#include <pthread.h>
#include <stdio.h>

struct pair {
    _Alignas(64) volatile int left;
    volatile int right;
};

struct pair neighbours;
volatile int together;
_Alignas(64) volatile int only_main;

static void *write_left(void *arg)
{
    (void)arg;
    for (int i = 0; i < 1000; i++)
        neighbours.left = i + together;
    return NULL;
}

static void *write_right(void *arg)
{
    (void)arg;
    for (int i = 0; i < 1000; i++)
        neighbours.right = i + together;
    return NULL;
}

int main(void)
{
    together = 1;
    only_main = 2;
    pthread_t a, b;
    pthread_create(&a, NULL, write_left, NULL);
    pthread_join(a, NULL);
    pthread_create(&b, NULL, write_right, NULL);
    pthread_join(b, NULL);
    printf("%d %d %d\n", neighbours.left, neighbours.right, only_main);
    return 0;
}
