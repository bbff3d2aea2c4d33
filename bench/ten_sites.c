/* ten_sites.c - ten allocation sites (site_0 ... site_9), each making one
 * block that the program then reads N times, interleaved: for memtap run
 * --watch, whose cost under the fault engine should follow the share of
 * the watched site's accesses (bench/watch.py).
 *   ten_sites [N]   (default 2000 reads per block)
 */
#include <stdio.h>
#include <stdlib.h>

/* the store after the call keeps it a call (not a jump): its return
 * address, the site, is in site_i */
#define SITE(i)                                                             \
    __attribute__((noinline)) static volatile long *site_##i(void)          \
    {                                                                       \
        volatile long *p = calloc(512, sizeof(long));                       \
        p[1] = i;                                                           \
        return p;                                                           \
    }
SITE(0) SITE(1) SITE(2) SITE(3) SITE(4)
SITE(5) SITE(6) SITE(7) SITE(8) SITE(9)

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 2000, sum = 0;
    volatile long *b[10] = { site_0(), site_1(), site_2(), site_3(), site_4(),
                             site_5(), site_6(), site_7(), site_8(), site_9() };
    for (long k = 0; k < n; k++)
        for (int i = 0; i < 10; i++)
            sum += b[i][(k * 8) % 512]; /* a new page now and then */
    printf("%ld\n", sum);
    return 0;
}
