/*
 * sleep_beside.c - a thread sleeps 20 times 10 ms (nanosleep) while the
 * main thread stores to 16 heap pages, then naps 100 us, until the
 * sleeper is done; prints how many sleeps ended early with EINTR
 * (natively none: no signal is sent).
 * Under the fault engine's step path each store is a window that stops
 * the other threads: their stop must not end the program's sleeps.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void *sleeper(void *arg)
{
    atomic_int *done = arg; /* on the main thread's stack: not traced */
    int early = 0;
    for (int i = 0; i < 20; i++) {
        struct timespec t = { 0, 10000000 };
        if (nanosleep(&t, NULL) != 0 && errno == EINTR)
            early++;
    }
    atomic_store(done, 1 + early);
    return NULL;
}

int main(void)
{
    atomic_int done = 0;
    long *pages = malloc(16 * 4096);
    pthread_t t;
    if (!pages || pthread_create(&t, NULL, sleeper, &done) != 0)
        return 1;
    for (int round = 0; !atomic_load(&done); round++) {
        for (int i = 0; i < 16; i++)
            pages[i * 512] = round;
        struct timespec nap = { 0, 100000 };
        nanosleep(&nap, NULL);
    }
    pthread_join(t, NULL);
    printf("sleeps ended early: %d\n", atomic_load(&done) - 1);
    return 0;
}
