/* mmap, mremap, munmap and the program break, in a known order. */
#define _GNU_SOURCE
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

int main(void)
{
    long page = sysconf(_SC_PAGESIZE);
    char *m = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);       /* P 0 */
    if (m == MAP_FAILED)
        return 1;
    m[0] = 1;
    char *r = mremap(m, 4 * page, 64 * page, MREMAP_MAYMOVE); /* E 1 */
    if (r == MAP_FAILED)
        return 2;
    if (munmap(r + 60 * page, 4 * page) != 0)                /* U: tail */
        return 3;
    if (munmap(r, 60 * page) != 0)                           /* U: rest */
        return 4;
    char *old = sbrk(0);
    if (sbrk(2 * page) == (void *)-1)                         /* P 2, brk */
        return 5;
    if (sbrk(-page) == (void *)-1)                            /* U, brk */
        return 6;
    if (brk(old) != 0)                                        /* U, brk */
        return 7;
    return 0;
}
