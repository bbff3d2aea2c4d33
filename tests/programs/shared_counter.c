/*
 * shared_counter.c - a parent counts to 100,000 in a shared anonymous
 * mapping (hot enough for the fault engine to give its page an alias),
 * then tells its child through a pipe, which prints what it reads there:
 * the mapping is one object for both processes (chromium's browser and
 * children share memory so).
 */
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
    volatile int *n = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                           MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    int go[2];
    if (n == MAP_FAILED || pipe(go) != 0)
        return 2;
    pid_t child = fork();
    if (child == 0) {
        char c;
        if (read(go[0], &c, 1) != 1)
            _exit(3);
        printf("the child reads %d\n", *n);
        fflush(stdout);
        _exit(0);
    }
    for (int i = 0; i < 100000; i++)
        (*n)++;
    if (write(go[1], "x", 1) != 1)
        return 4;
    int st;
    waitpid(child, &st, 0);
    printf("the parent counted %d\n", *n);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 5;
}
