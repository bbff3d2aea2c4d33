/*
 * blocks_all.c - a program that blocks every signal and then works on its
 * heap for ever (as a program stuck in a loop with its signals masked, or
 * a tracer's bug that leaves them masked, looks from outside): prints
 * "ready" once its mask is set; only SIGKILL ends it.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(void)
{
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, NULL);
    volatile long *counter = malloc(sizeof *counter);
    if (!counter)
        return 1;
    *counter = 0;
    printf("ready\n");
    fflush(stdout);
    struct timespec tick = { 0, 1000000 };
    for (;;) {
        ++*counter;
        nanosleep(&tick, NULL);
    }
}
