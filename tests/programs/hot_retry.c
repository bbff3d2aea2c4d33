/*
 * hot_retry.c - a store of four bytes and a load right after it, made hot
 * while the window the store's jump could reach is taken (mapped here,
 * PROT_NONE): the fault engine refuses the store and patches the load.
 * Then the window is given back and the two run 3000 times more: the
 * engine tries the store again (its jump's tail now the load's jump) and
 * patches it.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

extern const unsigned char store_at[];

static int touch(int *p)
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

int main(void)
{
    int *p = calloc(16, sizeof *p);
    if (!p)
        return 1;
    /* the store's jump: e9, three bytes of its own, then the load's first
     * (0x8b): 16 MiB at store + 5 + (int32_t)(0x8b << 24) */
    uint64_t at = (uint64_t)(uintptr_t)store_at;
    int64_t high = (int32_t)((uint32_t)store_at[4] << 24);
    uint64_t lo = (at + 5 + (uint64_t)high) & ~0xfffull, len = 17ull << 20;
    void *block = mmap((void *)lo, len, PROT_NONE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    long sum = 0;
    for (int i = 0; i < 100; i++)
        sum += touch(p);
    if (block != MAP_FAILED)
        munmap(block, len);
    for (int i = 0; i < 3000; i++)
        sum += touch(p);
    printf("%ld %d %d\n", sum, p[4], block != MAP_FAILED);
    free(p);
    return 0;
}
