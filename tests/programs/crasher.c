/* Allocates two blocks, then crashes with SIGSEGV (or, with "abort", calls
 * abort(); with "kill", is killed by SIGKILL after ALLOCS allocations). */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

int *volatile nowhere;

int main(int argc, char **argv)
{
    void *a = malloc(64);
    void *b = malloc(128);
    (void)a;
    (void)b;
    if (argc > 1 && strcmp(argv[1], "abort") == 0)
        abort();
    if (argc > 2 && strcmp(argv[1], "kill") == 0) {
        int n = atoi(argv[2]);
        for (int i = 0; i < n; i++)
            free(malloc(16));
        raise(SIGKILL);
    }
    return *nowhere;
}
