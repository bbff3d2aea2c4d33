/*
 * program_flags.c - traced accesses while the program has flags of its own
 * set that memtap's handlers must neither trip over nor change: AC
 * (alignment check: with it, each unaligned access of the thread raises
 * SIGBUS; the JVM's processor probe sets it) and ID (toggled by the same
 * probe to see whether cpuid exists; sigreturn does not restore it, so a
 * handler that changed it would change it for the program).  Each access
 * below is aligned, to a heap block, made with the flag set; the flags are
 * read back after it.  Prints what it saw, the same natively and under
 * memtap.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define AC 0x40000ul
#define ID 0x200000ul

/* Stores 7 to *p and loads it back with the flags xor `flip` (flags the
 * compiler's code in between must not see), returns the load and the
 * flags as they were after it, before the flags are put back. */
static uint64_t access_with(volatile uint64_t *p, uint64_t flip,
                            uint64_t *after)
{
    uint64_t v, f;
    __asm__ volatile("pushfq\n\t"
                     "xorq %[flip], (%%rsp)\n\t"
                     "popfq\n\t"
                     "movq $7, (%[p])\n\t"
                     "movq (%[p]), %[v]\n\t"
                     "pushfq\n\t"
                     "popq %[f]\n\t"
                     "pushfq\n\t"
                     "xorq %[flip], (%%rsp)\n\t"
                     "popfq"
                     : [v] "=&r"(v), [f] "=&r"(f)
                     : [p] "r"(p), [flip] "r"(flip)
                     : "memory", "cc");
    *after = f;
    return v;
}

static uint64_t flags_now(void)
{
    uint64_t f;
    __asm__ volatile("pushfq\n\tpopq %0" : "=r"(f));
    return f;
}

int main(void)
{
    volatile uint64_t *block = malloc(64);
    if (!block)
        return 1;
    const struct { const char *name; uint64_t bit; } flags[] = {
        { "AC", AC }, { "ID", ID } };
    for (int i = 0; i < 2; i++) {
        for (int round = 0; round < 3; round++) { /* a site seen again */
            uint64_t before = flags_now(), after;
            block[1 + round] = 0;
            uint64_t v = access_with(&block[1 + round], flags[i].bit, &after);
            printf("%s: loaded %lu, %s\n", flags[i].name, (unsigned long)v,
                   ((after ^ before) & flags[i].bit) ? "flipped as set"
                                                     : "NOT as set");
        }
    }
    free((void *)block);
    return 0;
}
