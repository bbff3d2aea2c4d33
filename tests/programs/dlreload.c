/* Loads a library, reads a heap int through it, unloads it, and does the
 * same with another (argv[2]) and with the first again: memtap's runtime
 * forgets an unloaded library (its int3 sites were read after it was
 * gone) and turns on a library loaded again where one was.  Prints each
 * value read. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static int peek_through(const char *lib, int value)
{
    void *h = dlopen(lib, RTLD_NOW);
    int (*peek)(const int *, int) = h ? (int (*)(const int *, int))dlsym(h, "peek")
                                      : NULL;
    if (!peek)
        return -1;
    int *p = malloc(sizeof *p);
    *p = value;
    int got = peek(p, 1);
    free(p);
    dlclose(h);
    return got;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    printf("%d %d %d\n", peek_through(argv[1], 11), peek_through(argv[2], 22),
           peek_through(argv[1], 33));
    return 0;
}
