/*
 * across_4g.c - reads 123 bytes of /dev/zero into a heap block with a
 * system call made from code above a 4 GiB boundary, in a library whose
 * code starts below it (across_4g_lib.c); prints where that code lies
 * and what the call returned, and exits 0 when it read all 123.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>

long across_4g_read(int fd, void *buf, long n);
void across_4g_padding(void);

int main(void)
{
    char *heap = malloc(4096);
    if (!heap)
        return 1;
    heap[0] = 1;
    int fd = open("/dev/zero", O_RDONLY);
    long got = across_4g_read(fd, heap, 123);
    printf("code %p %p: %ld\n", (void *)across_4g_padding,
           (void *)across_4g_read, got);
    free(heap);
    return got == 123 ? 0 : 2;
}
