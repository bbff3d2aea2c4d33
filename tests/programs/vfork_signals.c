/* The parent handles SIGINT and SIGUSR1; a vfork child sets each back to
 * SIG_DFL with sigaction before its exec (as CPython's subprocess child
 * does for every handled signal); then the parent raises both: its
 * handlers run, and it prints "handled 2". */
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t handled;

static void on_signal(int sig)
{
    (void)sig;
    handled++;
}

int main(void)
{
    signal(SIGINT, on_signal);
    signal(SIGUSR1, on_signal);
    pid_t pid = vfork();
    if (pid == 0) {
        struct sigaction dfl = { .sa_handler = SIG_DFL };
        sigaction(SIGINT, &dfl, NULL);
        sigaction(SIGUSR1, &dfl, NULL);
        execl("/bin/true", "true", (char *)NULL);
        _exit(127);
    }
    int status;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || status != 0)
        return 1;
    raise(SIGINT);
    raise(SIGUSR1);
    printf("handled %d\n", (int)handled);
    return 0;
}
