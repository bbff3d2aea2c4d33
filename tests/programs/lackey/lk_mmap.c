/* An anonymous mapping written and read page by page. */
#include <stddef.h>
#include <sys/mman.h>

int main(void)
{
    size_t len = 16 * 4096;
    unsigned char *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return 1;
    for (size_t i = 0; i < len; i += 512)
        m[i] = (unsigned char)(i >> 9);
    unsigned sum = 0;
    for (size_t i = 0; i < len; i += 512)
        sum += m[i];
    *(unsigned *)(m + 4094) = sum; /* straddles two pages */
    unsigned back = *(unsigned *)(m + 4094);
    munmap(m, len);
    return back != sum;
}
