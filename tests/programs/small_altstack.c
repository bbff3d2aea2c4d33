/* An alternate signal stack of 8 KiB inside a heap block, as Python's
 * faulthandler makes one, with guard bytes on both sides; then work that
 * makes memtap's handlers do theirs (system calls the filter traps, among
 * a million logged stores).  memtap's handlers must never run on the
 * program's stack (they overran it into the heap): the guards stay. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GUARD 32768
#define ALT 8192

static void on_usr1(int sig) { (void)sig; }

int main(void)
{
    unsigned char *block = malloc(GUARD + ALT + GUARD);
    if (!block)
        return 1;
    memset(block, 0xa5, GUARD + ALT + GUARD);
    stack_t ss = { .ss_sp = block + GUARD, .ss_size = ALT, .ss_flags = 0 };
    if (sigaltstack(&ss, NULL) != 0)
        return 2;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sa.sa_flags = SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    volatile long *cells = malloc(4096 * sizeof(long));
    long sum = 0;
    for (int round = 0; round < 100; round++) {
        for (int i = 0; i < 10000; i++)
            cells[i % 4096] = i + round;
        sigset_t set;
        sigemptyset(&set);
        sigprocmask(SIG_BLOCK, &set, NULL);   /* trapped under memtap */
        sigaction(SIGUSR1, &sa, NULL);        /* trapped too */
        sum += cells[round];
    }
    raise(SIGUSR1);
    size_t bad = 0;
    for (size_t i = 0; i < GUARD; i++)
        bad += (block[i] != 0xa5) + (block[GUARD + ALT + i] != 0xa5);
    printf("sum %ld, guard bytes changed: %zu\n", sum, bad);
    return bad != 0;
}
