/*
 * late_thread.c - a thread that cannot stop for a while: it waits in vfork
 * for a child that sleeps 2.5 s (a thread in vfork takes no signal), while
 * the main thread makes a traced access; then it runs again, in short
 * sleeps, and the main thread makes 200 more, one heap page each.  The
 * fault engine cannot stop the first thread for the first access (an
 * exposed window); it can for the 200.  The threads meet through a word on
 * the main thread's stack, which is not traced.  Prints the sum of what it
 * stored.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PAGES 200

static void nap(long ns)
{
    struct timespec t = { ns / 1000000000, ns % 1000000000 };
    nanosleep(&t, NULL);
}

static void *vforker(void *arg)
{
    atomic_int *phase = arg; /* 1: in vfork; 2: back; 3: stop */
    atomic_store(phase, 1);
    pid_t pid = vfork();
    if (pid == 0) {
        nap(2500000000);
        _exit(0);
    }
    if (pid > 0)
        waitpid(pid, NULL, 0);
    atomic_store(phase, 2);
    while (atomic_load(phase) != 3)
        nap(1000000);
    return NULL;
}

int main(void)
{
    atomic_int phase = 0;
    long *pages = malloc((PAGES + 1) * 4096);
    pthread_t t;
    if (!pages || pthread_create(&t, NULL, vforker, &phase) != 0)
        return 1;
    while (atomic_load(&phase) != 1)
        nap(1000000);
    nap(300000000); /* into vfork's wait */
    pages[0] = 1;
    while (atomic_load(&phase) != 2)
        nap(1000000);
    long sum = pages[0];
    for (int i = 1; i <= PAGES; i++) {
        pages[i * 512] = i;
        sum += pages[i * 512];
    }
    atomic_store(&phase, 3);
    pthread_join(t, NULL);
    printf("sum %ld\n", sum);
    return 0;
}
