/* vfork + exec of a program, and vfork + _exit: the child shares the
 * parent's memory until then, so the parent's trace must go on as if
 * nothing happened (no end record from the child, later blocks kept). */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    (void)argc;
    void *before = malloc(500);
    pid_t pid = vfork();
    if (pid == 0) {
        execl(argv[0] ? "/bin/true" : "", "true", (char *)NULL);
        _exit(9);
    }
    int status;
    waitpid(pid, &status, 0);
    pid = vfork();
    if (pid == 0)
        _exit(0);
    waitpid(pid, &status, 0);
    void *after = malloc(600);
    free(before);
    free(after);
    return 0;
}
