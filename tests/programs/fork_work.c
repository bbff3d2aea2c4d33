/* Parent and forked child each store 1000 ints into a heap block of their
 * own (block_parent, block_child) and read them back: 1000 stores and
 * 1000 loads of each block, in each process's trace. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fill_sum.h"

#define N 1000

__attribute__((noinline)) int *block_parent(void) { return malloc(N * sizeof(int)); }
__attribute__((noinline)) int *block_child(void) { return malloc(N * sizeof(int)); }

int main(void)
{
    pid_t pid = fork();
    if (pid < 0)
        return 1;
    int *a = pid == 0 ? block_child() : block_parent();
    long sum = fill_and_sum(a, N);
    free(a);
    if (pid == 0)
        _exit(sum == (long)N * (N - 1) / 2 ? 0 : 1);
    int status;
    waitpid(pid, &status, 0);
    printf("%ld\n", sum);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
