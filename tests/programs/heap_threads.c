/* THREADS threads (argv[1], default 64) each allocate a block of 2000
 * longs, store to every element and load every element back (4000 heap
 * accesses each), then (given a FILE, argv[2]) read that file into the
 * block with one read(2), and free it, all while the others run: under the
 * fault engine every one of THREADS * 4000 accesses and THREADS reads must
 * be recorded and no window exposed. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define ELEMENTS 2000

static const char *file;

static void *work(void *arg)
{
    volatile long *block = malloc(ELEMENTS * sizeof *block);
    long sum = 0;
    if (!block)
        return arg;
    for (int i = 0; i < ELEMENTS; i++)
        block[i] = i;
    for (int i = 0; i < ELEMENTS; i++)
        sum += block[i];
    int fd = file ? open(file, O_RDONLY) : -1;
    if (fd >= 0) {
        if (read(fd, (void *)block, ELEMENTS * sizeof *block) <= 0)
            sum = -1;
        close(fd);
    }
    free((void *)block);
    return sum == (long)ELEMENTS * (ELEMENTS - 1) / 2 ? NULL : arg;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 64;
    file = argc > 2 ? argv[2] : NULL;
    pthread_t *t = calloc((size_t)n, sizeof *t);
    int bad = 0;
    if (!t || n < 1)
        return 2;
    for (int i = 0; i < n; i++)
        if (pthread_create(&t[i], NULL, work, t) != 0)
            return 2;
    for (int i = 0; i < n; i++) {
        void *r;
        pthread_join(t[i], &r);
        bad += r != NULL;
    }
    free(t);
    printf("%d threads, %d wrong\n", n, bad);
    return bad != 0;
}
