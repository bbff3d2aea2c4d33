/* Futex calls whose arguments memtap must read by operation, while a
 * second thread runs:
 * - a wake made with every register argument set, as a raw syscall()
 *   does: for FUTEX_WAKE the kernel reads only the word, so the pointers
 *   in the fourth and fifth arguments (heap blocks here, whatever the
 *   registers held in a real program) are no arguments at all; the word
 *   is on the stack (untraced: the call is the kernel's to make);
 * - a timed wait on a heap word whose absolute timeout is in the heap
 *   too: it times out after a millisecond.
 * Exit status 0 when the wake returns 0 (nobody waits) and the wait
 * ETIMEDOUT. */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int fds[2], ready[2];

/* says it runs, then waits for main's byte */
static void *waiter(void *arg)
{
    char c = 'r';
    (void)arg;
    if (write(ready[1], &c, 1) != 1)
        return (void *)1;
    return read(fds[0], &c, 1) == 1 ? NULL : (void *)1;
}

int main(void)
{
    uint32_t word = 0;
    long *block = malloc(64);
    pthread_t t;
    char c;
    if (!block || pipe(fds) != 0 || pipe(ready) != 0 ||
        pthread_create(&t, NULL, waiter, NULL) != 0 || read(ready[0], &c, 1) != 1)
        return 2;
    block[0] = 1;
    long woken = syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, block, block + 4, 0);
    uint32_t *heap_word = malloc(sizeof *heap_word);
    struct timespec *until = malloc(sizeof *until);
    if (!heap_word || !until || clock_gettime(CLOCK_MONOTONIC, until) != 0)
        return 2;
    *heap_word = 7;
    until->tv_nsec += 1000000;
    if (until->tv_nsec >= 1000000000) {
        until->tv_sec++;
        until->tv_nsec -= 1000000000;
    }
    long waited = syscall(SYS_futex, heap_word, FUTEX_WAIT_BITSET_PRIVATE, 7, until, NULL,
                          FUTEX_BITSET_MATCH_ANY);
    int timed_out = waited == -1 && errno == ETIMEDOUT;
    void *r;
    if (write(fds[1], "x", 1) != 1 || pthread_join(t, &r) != 0 || r)
        return 2;
    return woken == 0 && timed_out ? 0 : 1;
}
