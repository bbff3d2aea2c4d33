/*
 * own_text.c - where the text of libmemtap.so lies (for the seccomp filter:
 * the syscall instruction of sys/rawsys.c is inside it).
 */
#define _GNU_SOURCE
#include "own_text.h"

#include <link.h>
#include <stdint.h>
#include <string.h>

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

void own_text_range(unsigned long *start, unsigned long *end)
{
    text_search s;
    memset(&s, 0, sizeof s);
    s.probe = (uintptr_t)raw_syscall6;
    dl_iterate_phdr(find_text, &s);
    *start = s.start;
    *end = s.end;
}
