/*
 * pagemap.h - one byte of state per page of the address space, in a
 * two-level table whose leaves are mapped on first write.  Lock-free and
 * safe in signal handlers: the fault engine asks it, for every fault,
 * whether the page is one memtap protected and what rights to give back.
 */
#ifndef MEMTAP_PRELOAD_PAGEMAP_H
#define MEMTAP_PRELOAD_PAGEMAP_H

#include <stdint.h>

#include "sys/page.h"

/* State byte: PM_TRACKED, the kind of memory (PM_HEAP: blocks and
 * mappings the program made through the allocator and mmap family;
 * PM_STATIC: data and bss of its modules), PM_SHARED for a page of a
 * shared mapping (another process may map it too) and the page's own
 * rights (PROT_* bits). */
#define PM_TRACKED 0x80u
#define PM_SHARED 0x40u
#define PM_HEAP 0x10u
#define PM_STATIC 0x20u
#define PM_REGION_MASK 0x30u
#define PM_PROT_MASK 0x07u

int pagemap_init(void);
uint8_t pagemap_get(uintptr_t addr);
/* Sets the state of every page overlapping [start, end). */
void pagemap_set_range(uintptr_t start, uintptr_t end, uint8_t state);
/* A number that changes after any page's state has: what was read of the
 * map after taking it holds while it stays the same. */
uint64_t pagemap_generation(void);

/* The state of addr's page, and in [*lo, *hi) the pages around it whose
 * states agree with it in the bits of `mask`: at most `reach` pages on
 * either side, within addr's leaf. */
uint8_t pagemap_span(uintptr_t addr, uint8_t mask, uintptr_t reach,
                     uintptr_t *lo, uintptr_t *hi);

/* Calls fn for each maximal run of tracked pages with the same state. */
void pagemap_for_each_tracked(void (*fn)(uintptr_t start, uintptr_t end,
                                         uint8_t state, void *arg),
                              void *arg);

#endif
