/* A thread other than main allocates ten blocks (100..109 bytes), then
 * overflows its stack; main waits for it.  The process dies of SIGSEGV. */
#include <pthread.h>
#include <stdlib.h>

static int dive(int depth)
{
    volatile char frame[1024];
    frame[0] = (char)depth;
    if (depth < 0) /* never: the stack runs out first */
        return 0;
    return dive(depth + 1) + frame[0];
}

static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 10; i++)
        (void)!malloc(100 + (size_t)i);
    return (void *)(long)dive(0);
}

int main(void)
{
    void *keep = malloc(50);
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, NULL);
    free(keep);
    return 0;
}
