/* Loads a library at run time and allocates through it, then unloads it. */
#include <dlfcn.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    void *h = dlopen(argv[1], RTLD_NOW);
    if (!h)
        return 1;
    void *(*make)(void) = (void *(*)(void))dlsym(h, "plugin_make");
    if (!make)
        return 1;
    free(make());
    dlclose(h);
    return 0;
}
