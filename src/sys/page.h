/*
 * sys/page.h - the page size memtap works in: x86-64 Linux's base page
 * (4 KiB), for page protection, page maps and page-granular reports.
 */
#ifndef MEMTAP_SYS_PAGE_H
#define MEMTAP_SYS_PAGE_H

#include <stdint.h>

#define PAGE_SHIFT 12
#define PAGE (1ull << PAGE_SHIFT)

/* The start of the page holding a. */
static inline uintptr_t page_start(uintptr_t a)
{
    return a & ~(uintptr_t)(PAGE - 1);
}

#endif
