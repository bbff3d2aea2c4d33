/*
 * altstack.c - an alternate signal stack of 8 KiB in a heap block (as
 * programs and language runtimes set one for stack overflows; the classic
 * SIGSTKSZ): a SIGUSR1 handler with SA_ONSTACK, raised three times, asks
 * sigaltstack whether it runs on the alternate stack; prints what it saw
 * and exits 0 when all went as the kernel says.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile int on_stack, hits;

static void on_usr1(int sig)
{
    (void)sig;
    stack_t now;
    if (sigaltstack(NULL, &now) == 0 && (now.ss_flags & SS_ONSTACK))
        on_stack++;
    hits++;
}

int main(void)
{
    stack_t ss = { .ss_sp = malloc(8192), .ss_size = 8192 }, old;
    if (!ss.ss_sp)
        return 1;
    memset(ss.ss_sp, 0, ss.ss_size);
    if (sigaltstack(&ss, NULL) != 0) {
        perror("sigaltstack");
        return 1;
    }
    if (sigaltstack(NULL, &old) != 0 || old.ss_sp != ss.ss_sp ||
        old.ss_size != ss.ss_size || old.ss_flags != 0) {
        fprintf(stderr, "altstack: sigaltstack reports another stack\n");
        return 1;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sa.sa_flags = SA_ONSTACK;
    sigaction(SIGUSR1, &sa, NULL);
    for (int i = 0; i < 3; i++)
        raise(SIGUSR1);
    stack_t off = { .ss_flags = SS_DISABLE };
    int disabled = sigaltstack(&off, NULL) == 0 &&
                   sigaltstack(NULL, &old) == 0 && (old.ss_flags & SS_DISABLE);
    printf("handled %d, on the alternate stack %d, disabled %d\n", hits,
           on_stack, disabled);
    return hits == 3 && on_stack == 3 && disabled ? 0 : 2;
}
