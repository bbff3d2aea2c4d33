/*
 * hot_neighbours.c - a store of four bytes right before a load of three,
 * the two made hot in an order the fault engine once refused to patch:
 *
 *   before  the load made hot first, alone (a branch lands on it), then
 *           the store: a jump over the store takes the load's jump bytes
 *           for its tail (3000 stores, 4000 loads)
 *   retry   both made hot while the window the store's jump could reach
 *           is taken (mapped here, PROT_NONE): the store is refused, the
 *           load patched; then the window is given back and the two run
 *           3000 times more: the store is tried again, its jump's tail
 *           now the load's jump (3100 of each; prints 1 last when the
 *           window could be taken)
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static int touch_before(int *p, int both)
{
    int got;
    __asm__ volatile("xor %%eax, %%eax\n\t"
                     "test %2, %2\n\t"
                     "jz 1f\n\t"
                     "movl %3, 0x10(%1,%%rax,1)\n\t" /* 4 bytes */
                     "1: movl 0x4(%1), %0"            /* 3 bytes */
                     : "=&c"(got)
                     : "r"(p), "r"(both), "r"(7)
                     : "rax", "memory");
    return got;
}

extern const unsigned char store_at[];

static int touch_pair(int *p)
{
    int got;
    __asm__ volatile("xor %%eax, %%eax\n\t"
                     ".globl store_at\n"
                     "store_at: movl %%edx, 0x10(%%rsi,%%rax,1)\n\t" /* 4 bytes */
                     "movl 0x4(%%rsi), %%ecx"                        /* 3 bytes */
                     : "=c"(got)
                     : "S"(p), "d"(7)
                     : "rax", "memory");
    return got;
}

/* Maps the window the jump over store_at can reach, with the load's
 * first byte after its own three: 16 MiB at store + 5 +
 * (int32_t)(that byte << 24).  MAP_FAILED when it is taken already. */
static void *take_window(size_t len)
{
    uint64_t at = (uint64_t)(uintptr_t)store_at;
    int64_t high = (int32_t)((uint32_t)store_at[4] << 24);
    uint64_t lo = (at + 5 + (uint64_t)high) & ~0xfffull;
    return mmap((void *)lo, len, PROT_NONE,
                MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
}

int main(int argc, char **argv)
{
    int *p = calloc(16, sizeof *p);
    if (!p || argc < 2)
        return 1;
    long sum = 0;
    if (strcmp(argv[1], "before") == 0) {
        for (int i = 0; i < 1000; i++)
            sum += touch_before(p, 0);
        for (int i = 0; i < 3000; i++)
            sum += touch_before(p, 1);
        printf("%ld %d\n", sum, p[4]);
    } else {
        size_t len = 17u << 20;
        void *block = take_window(len);
        for (int i = 0; i < 100; i++)
            sum += touch_pair(p);
        if (block != MAP_FAILED)
            munmap(block, len);
        for (int i = 0; i < 3000; i++)
            sum += touch_pair(p);
        printf("%ld %d %d\n", sum, p[4], block != MAP_FAILED);
    }
    free(p);
    return 0;
}
