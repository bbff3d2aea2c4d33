/* Allocates nothing itself and starts a thread that allocates nothing:
 * memtap's own memory must not appear in its trace. */
#include <pthread.h>

static void *idle(void *arg)
{
    return arg;
}

int main(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, idle, NULL) != 0)
        return 1;
    pthread_join(t, NULL);
    return 0;
}
