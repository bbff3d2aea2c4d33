/* Memory whose pages the fault engine reaches through aliases (each page
 * touched many times first), then treated the ways that tell a shared
 * page from a private one: madvise(MADV_DONTNEED) must read back zeros,
 * mremap (by hand and through realloc) must keep the bytes and work on
 * the whole range, a new mapping where an unmapped one was must read
 * zeros, calloc after the heap shrank must give zeros, and a forked child
 * must not see its parent's later stores (a second thread reading the
 * pages all the while).  Prints what it checked and how many values were
 * wrong; natively and traced the output is the same. */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAGE 4096
#define PAGES 16
#define ROUNDS 12 /* stores and loads of each page: hot */

static long wrong;

/* Stores base + i into every long of [p, p + n), ROUNDS times over, and
 * reads each back. */
static void heat(volatile long *p, size_t n, long base)
{
    for (int r = 0; r < ROUNDS; r++)
        for (size_t i = 0; i < n; i += 64) {
            p[i] = base + (long)i;
            wrong += p[i] != base + (long)i;
        }
    for (size_t i = 0; i < n; i++)
        p[i] = base + (long)i;
}

static void expect(const volatile long *p, size_t n, long base, long step)
{
    for (size_t i = 0; i < n; i++)
        wrong += p[i] != base + step * (long)i;
}

/* The second thread: reads the pages over and over until told to stop
 * (the fork is made while it does). */
static volatile long *reader_pages;
static size_t reader_n;
static atomic_int reader_stop;
static long reader_sum;

static void *reader(void *unused)
{
    (void)unused;
    long sum = 0;
    while (!atomic_load(&reader_stop))
        for (size_t i = 0; i < reader_n; i += 512)
            sum += reader_pages[i];
    reader_sum = sum;
    return NULL;
}

static volatile long *map(size_t pages, void *at)
{
    void *p = mmap(at, pages * PAGE, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | (at ? MAP_FIXED : 0), -1, 0);
    if (p == MAP_FAILED)
        exit(2);
    return p;
}

int main(void)
{
    size_t n = PAGES * PAGE / sizeof(long), half = n / 2;
    volatile long *m = map(PAGES, NULL);
    heat(m, n, 100);
    /* dropped pages of a private mapping read zeros */
    if (madvise((void *)m, PAGES * PAGE / 2, MADV_DONTNEED) != 0)
        return 2;
    expect(m, half, 0, 0);
    expect(m + half, n - half, 100 + (long)half, 1);
    printf("madvise: %ld wrong\n", wrong);

    /* the whole range moves, its bytes with it */
    heat(m, n, 300);
    volatile long *moved = mremap((void *)m, PAGES * PAGE, 4 * PAGES * PAGE, MREMAP_MAYMOVE);
    if (moved == MAP_FAILED) {
        printf("mremap: failed\n");
        return 1;
    }
    expect(moved, n, 300, 1);
    expect(moved + n, 3 * n, 0, 0);
    printf("mremap: %ld wrong\n", wrong);

    /* a new mapping where one was: zeros, not the old bytes */
    heat(moved, n, 500);
    void *at = (void *)moved;
    if (munmap(at, 4 * PAGES * PAGE) != 0)
        return 2;
    volatile long *again = map(PAGES, at);
    expect(again, n, 0, 0);
    printf("munmap: %ld wrong\n", wrong);

    /* realloc of a block malloc mapped: mremap underneath */
    size_t big = 64 * PAGE / sizeof(long);
    volatile long *b = malloc(big * sizeof(long));
    if (!b)
        return 2;
    heat(b, big, 700);
    b = realloc((void *)b, 4 * big * sizeof(long));
    if (!b)
        return 2;
    expect(b, big, 700, 1);
    free((void *)b);
    printf("realloc: %ld wrong\n", wrong);

    /* the heap shrinks and grows again: calloc's blocks are zero */
    enum { SMALL = 2000 };
    static volatile long *small[SMALL];
    for (int i = 0; i < SMALL; i++) {
        small[i] = malloc(512);
        if (!small[i])
            return 2;
        heat(small[i], 512 / sizeof(long), i);
    }
    for (int i = 0; i < SMALL; i++)
        free((void *)small[i]);
    malloc_trim(0);
    for (int i = 0; i < SMALL; i++) {
        small[i] = calloc(1, 512);
        if (!small[i])
            return 2;
        expect(small[i], 512 / sizeof(long), 0, 0);
    }
    printf("calloc: %ld wrong\n", wrong);

    /* a child keeps what it had at the fork, whatever its parent stores
     * after it */
    heat(again, n, 900);
    int done[2];
    pthread_t other;
    reader_pages = again;
    reader_n = n;
    if (pipe(done) != 0 || pthread_create(&other, NULL, reader, NULL) != 0)
        return 2;
    usleep(20000);
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        return 2;
    if (pid == 0) {
        char c;
        if (read(done[0], &c, 1) != 1) /* the parent's stores are made */
            _exit(2);
        expect(again, n, 900, 1);
        printf("child: %ld wrong\n", wrong);
        fflush(stdout);
        _exit(0);
    }
    atomic_store(&reader_stop, 1);
    pthread_join(other, NULL);
    heat(again, n, 1100);
    if (write(done[1], "x", 1) != 1)
        return 2;
    int status;
    waitpid(pid, &status, 0);
    expect(again, n, 1100, 1);
    printf("parent: %ld wrong\n", wrong);
    return wrong != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0;
}
