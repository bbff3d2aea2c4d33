/* A parent and its forked child store different values into the block
 * the child inherited: each must read back its own values (under the fault
 * engine the child's stores complete through its own memory, not its
 * parent's).  Prints one line per process. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define N 512

static int fill_and_check(volatile long *block, long base)
{
    for (int i = 0; i < N; i++)
        block[i] = base + i;
    usleep(20000); /* the other process stores meanwhile */
    int wrong = 0;
    for (int i = 0; i < N; i++)
        wrong += block[i] != base + i;
    return wrong;
}

int main(void)
{
    volatile long *block = malloc(N * sizeof *block);
    if (!block)
        return 2;
    block[0] = 1;
    pid_t pid = fork();
    if (pid < 0)
        return 2;
    if (pid == 0) {
        int wrong = fill_and_check(block, 1000000);
        printf("child: %d wrong\n", wrong);
        fflush(stdout);
        _exit(wrong != 0);
    }
    int wrong = fill_and_check(block, 2000000);
    int status;
    waitpid(pid, &status, 0);
    printf("parent: %d wrong\n", wrong);
    return wrong != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0;
}
