/* A timer signal every 100 us whose handler touches two globals, while
 * main stores N (default 5000) heap words; prints "stored N". */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>

volatile long ticks, touched;

static void on_alarm(int sig)
{
    (void)sig;
    ticks++;
    touched += 2;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 5000;
    signal(SIGALRM, on_alarm);
    struct itimerval every = { { 0, 100 }, { 0, 100 } }, off = { { 0, 0 }, { 0, 0 } };
    setitimer(ITIMER_REAL, &every, NULL);
    long *heap = malloc((size_t)n * sizeof *heap);
    for (long i = 0; i < n; i++)
        heap[i] = i;
    setitimer(ITIMER_REAL, &off, NULL);
    printf("stored %ld\n", heap[n - 1] + 1);
    free(heap);
    return 0;
}
