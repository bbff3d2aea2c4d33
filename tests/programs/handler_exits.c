/* Leaves a signal handler the ways programs do, then touches globals whose
 * accesses a trace must still hold:
 *   siglongjmp  SIGSEGV handler (a NULL store) -> siglongjmp
 *   longjmp     SIGSEGV handler -> longjmp (the signal mask is not
 *               restored: natively SIGSEGV stays blocked)
 *   trap        SIGTRAP handler (int3) -> siglongjmp
 *   exit        SIGSEGV handler -> exit(3); an atexit function stores
 * After the jump, main stores after[0..4] once each. */
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

int main(int argc, char **argv)
{
    const char *how = argc > 1 ? argv[1] : "siglongjmp";
    volatile int *nowhere = NULL;
    use_longjmp = strcmp(how, "longjmp") == 0;
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
        else
            *nowhere = 1;
        return 1;
    }
    for (int i = 0; i < 5; i++)
        after[i] = i + jumped;
    printf("%s: back from signal %d\n", how, jumped);
    return 0;
}
