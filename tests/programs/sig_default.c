/* As CPython does at start: installs its SIGINT handler only where the
 * action it finds is SIG_DFL, then raises SIGINT and says whether its
 * handler ran.  Then sets SIGTERM to SIG_DFL explicitly and raises it: the
 * process dies of SIGTERM (memtap's handler, which stands for SIG_DFL,
 * still ends the trace). */
#include <signal.h>
#include <stdio.h>
#include <string.h>

static volatile sig_atomic_t handled;

static void on_int(int sig) { (void)sig; handled = 1; }

int main(void)
{
    struct sigaction old, sa;
    if (sigaction(SIGINT, NULL, &old) != 0)
        return 1;
    int dfl = old.sa_handler == SIG_DFL && !(old.sa_flags & SA_SIGINFO);
    printf("SIGINT was %s\n", dfl ? "SIG_DFL" : "something else");
    if (dfl) {
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_int;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL);
    }
    raise(SIGINT);
    printf("handled: %d\n", (int)handled);
    fflush(stdout);
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sigaction(SIGTERM, &sa, NULL);
    raise(SIGTERM);
    return 0;
}
