/* Blocks SIGUSR1, raises it (its handler must wait), reports what the mask
 * says, then unblocks it (the handler runs once). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

volatile int hits;
int seen_while_blocked;

static void on_usr1(int sig)
{
    (void)sig;
    hits++;
}

int main(void)
{
    signal(SIGUSR1, on_usr1);
    sigset_t m, old, now;
    sigemptyset(&m);
    sigaddset(&m, SIGUSR1);
    sigprocmask(SIG_BLOCK, &m, &old);
    raise(SIGUSR1);
    seen_while_blocked = hits;
    sigprocmask(SIG_BLOCK, NULL, &now);
    printf("while blocked: %d handler runs; SIGUSR1 %s, SIGTERM %s\n",
           seen_while_blocked, sigismember(&now, SIGUSR1) ? "blocked" : "open",
           sigismember(&now, SIGTERM) ? "blocked" : "open");
    sigprocmask(SIG_SETMASK, &old, NULL);
    printf("after: %d\n", hits);
    return 0;
}
