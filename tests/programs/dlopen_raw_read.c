/*
 * dlopen_raw_read.c - loads the library argv[1] (raw_read_lib.c) with
 * dlopen, after start-up, and reads 123 bytes of /dev/zero into a heap
 * block through its raw_read, which makes the system call itself; prints
 * where raw_read lies and what the call returned, and exits 0 when it
 * read all 123.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    char *heap = malloc(4096);
    if (argc < 2 || !heap)
        return 1;
    heap[0] = 1;
    void *lib = dlopen(argv[1], RTLD_NOW);
    long (*raw_read)(int, void *, long) =
        lib ? (long (*)(int, void *, long))dlsym(lib, "raw_read") : NULL;
    if (!raw_read) {
        fprintf(stderr, "dlopen_raw_read: %s\n", dlerror());
        return 1;
    }
    int fd = open("/dev/zero", O_RDONLY);
    long got = raw_read(fd, heap, 123);
    printf("raw_read %p: %ld\n", (void *)raw_read, got);
    free(heap);
    return got == 123 ? 0 : 2;
}
