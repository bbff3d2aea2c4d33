/* Leaves a signal handler the ways programs do, then touches globals whose
 * accesses a trace must still hold:
 *   siglongjmp  SIGSEGV handler (a NULL store) -> siglongjmp
 *   longjmp     SIGSEGV handler -> longjmp (the signal mask is not
 *               restored: natively SIGSEGV stays blocked)
 *   trap        SIGTRAP handler (int3) -> siglongjmp
 *   exit        SIGSEGV handler -> exit(3); an atexit function stores
 *   memcpy      a thread waits on a global; memcpy from NULL faults inside
 *               the C library, the SIGSEGV handler longjmps out; then main
 *               lets the thread finish and reports whether SIGTERM is
 *               blocked
 * After the jump, main stores after[0..4] once each. */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static sigjmp_buf sig_env;
static jmp_buf env;
int after[5];
int at_exit_value;
static int use_longjmp;

static void on_signal(int sig)
{
    if (use_longjmp)
        longjmp(env, sig);
    siglongjmp(sig_env, sig);
}

static void on_segv_exit(int sig)
{
    (void)sig;
    exit(3);
}

static void at_exit(void) { at_exit_value = 42; }

volatile int go, worker_done;

static void *worker(void *arg)
{
    (void)arg;
    while (!go)
        ;
    worker_done = 1;
    return NULL;
}

int main(int argc, char **argv)
{
    const char *how = argc > 1 ? argv[1] : "siglongjmp";
    volatile int *nowhere = NULL;
    int in_memcpy = strcmp(how, "memcpy") == 0;
    use_longjmp = strcmp(how, "longjmp") == 0 || in_memcpy;
    pthread_t t;
    char *block = malloc(64);
    if (in_memcpy)
        pthread_create(&t, NULL, worker, NULL);
    if (strcmp(how, "exit") == 0) {
        atexit(at_exit);
        signal(SIGSEGV, on_segv_exit);
        *nowhere = 1;
        return 1;
    }
    signal(strcmp(how, "trap") == 0 ? SIGTRAP : SIGSEGV, on_signal);
    int jumped = use_longjmp ? setjmp(env) : sigsetjmp(sig_env, 1);
    if (!jumped) {
        if (strcmp(how, "trap") == 0)
            __asm__ volatile("int3");
        else if (in_memcpy)
            memcpy(block, (const void *)nowhere, 64);
        else
            *nowhere = 1;
        return 1;
    }
    if (in_memcpy) {
        go = 1;
        pthread_join(t, NULL);
        sigset_t now;
        sigprocmask(SIG_BLOCK, NULL, &now);
        printf("SIGTERM %s, worker %s\n",
               sigismember(&now, SIGTERM) ? "blocked" : "deliverable",
               worker_done ? "done" : "not done");
    }
    for (int i = 0; i < 5; i++)
        after[i] = i + jumped;
    printf("%s: back from signal %d\n", how, jumped);
    free(block);
    return 0;
}
