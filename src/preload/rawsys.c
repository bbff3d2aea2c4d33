/*
 * rawsys.c - the one syscall instruction of libmemtap.so, and where its
 * text lies (for the seccomp filter).
 */
#define _GNU_SOURCE
#include "rawsys.h"

#include <link.h>
#include <stdint.h>
#include <string.h>

long raw_syscall6(long nr, long a, long b, long c, long d, long e, long f)
{
    long ret;
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = f;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8),
                       "r"(r9)
                     : "rcx", "r11", "memory");
    return ret;
}

typedef struct text_search {
    uintptr_t probe;
    unsigned long start, end;
} text_search;

static int find_text(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    text_search *s = data;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) &&
            s->probe >= lo && s->probe - lo < ph->p_memsz) {
            s->start = lo;
            s->end = lo + ph->p_memsz;
            return 1;
        }
    }
    return 0;
}

void rawsys_text_range(unsigned long *start, unsigned long *end)
{
    text_search s;
    memset(&s, 0, sizeof s);
    s.probe = (uintptr_t)raw_syscall6;
    dl_iterate_phdr(find_text, &s);
    *start = s.start;
    *end = s.end;
}
