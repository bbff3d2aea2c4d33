/* Links big_tls_lib (48 KiB of initial-exec TLS) and uses it from the
 * main thread and a second one: the sum each computes. */
#include <pthread.h>
#include <stdio.h>

unsigned big_tls_sum(unsigned char seed);

static void *worker(void *arg)
{
    *(unsigned *)arg = big_tls_sum(7);
    return NULL;
}

int main(void)
{
    unsigned other = 0;
    pthread_t t;
    if (pthread_create(&t, NULL, worker, &other) != 0)
        return 1;
    pthread_join(t, NULL);
    printf("%u %u\n", big_tls_sum(3), other);
    return 0;
}
