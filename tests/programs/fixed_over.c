/* fixed_over.c - a mapping replaced in part by mmap(MAP_FIXED): two pages
 * mapped, one store to each; a fresh page mapped over the second, one
 * store to it and one load back (the fresh page reads what was stored in
 * it, not the old page's 2). */
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

int main(void)
{
    long page = sysconf(_SC_PAGESIZE);
    volatile char *m = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return 1;
    m[0] = 1;
    m[page] = 2;
    if (mmap((char *)m + page, page, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != m + page)
        return 2;
    m[page + 8] = 3;
    printf("%d %d\n", m[page + 8], m[page]);
    return 0;
}
