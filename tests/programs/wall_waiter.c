/* Waits until it has no child left, as strace -f does: with __WALL, which
 * also sees the children whose end sends no SIGCHLD; or, with the argument
 * "reaper", as a subreaper (PR_SET_CHILD_SUBREAPER: orphans among its
 * descendants become its children) waiting with plain waits.  Parent and
 * forked child first store and load 1000 ints of a heap block each (enough
 * records for memtap's writer to start in both); then the parent waits
 * and prints how many children it reaped: 1.  An alarm ends it after 20 s
 * (a child it waits for that never ends). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fill_sum.h"

#define N 1000

static long work(void)
{
    int *a = malloc(N * sizeof(int));
    long sum = a ? fill_and_sum(a, N) : -1;
    free(a);
    return sum;
}

int main(int argc, char **argv)
{
    int reaper = argc > 1 && strcmp(argv[1], "reaper") == 0;
    if (reaper && prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
        return 2;
    alarm(20);
    work();
    pid_t pid = fork();
    if (pid < 0)
        return 1;
    if (pid == 0)
        _exit(work() == (long)N * (N - 1) / 2 ? 0 : 1);
    work();
    int reaped = 0, status, failed = 0;
    while (waitpid(-1, &status, reaper ? 0 : __WALL) > 0) {
        reaped++;
        failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    }
    printf("reaped %d\n", reaped);
    return errno == ECHILD && !failed ? 0 : 1;
}
