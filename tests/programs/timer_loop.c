/*
 * timer_loop.c - a loop of known accesses under a 50 µs interval timer
 * whose handler has accesses of its own: `cells` is loaded and stored
 * 2 x ITERATIONS times in all (the loop's `+=`), `ticks` loaded and
 * stored once per signal handled.  Prints the signals handled, so a test
 * knows exactly what a whole trace holds of each.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

#define ITERATIONS 3000000

long cells[1024];
volatile long ticks;

static void on_alarm(int sig)
{
    (void)sig;
    ticks++;
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval every = { { 0, 50 }, { 0, 50 } };
    setitimer(ITIMER_REAL, &every, NULL);
    for (long i = 0; i < ITERATIONS; i++)
        cells[i & 1023] += i;
    struct itimerval off = { { 0, 0 }, { 0, 0 } };
    setitimer(ITIMER_REAL, &off, NULL);
    printf("ticks %ld\n", ticks);
    return 0;
}
