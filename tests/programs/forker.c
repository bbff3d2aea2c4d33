/* The parent allocates a block, forks; the child frees the inherited block
 * and allocates its own; the parent waits and frees its copy. */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) void *parent_block(void)
{
    void *p = malloc(111);
    return p;
}

__attribute__((noinline)) void *child_block(void)
{
    void *p = malloc(222);
    return p;
}

int main(void)
{
    void *p = parent_block();
    pid_t pid = fork();
    if (pid < 0)
        return 1;
    if (pid == 0) {
        free(p);
        void *q = child_block();
        free(q);
        _exit(0);
    }
    int status;
    waitpid(pid, &status, 0);
    free(p);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
