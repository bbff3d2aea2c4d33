/*
 * alias.h - second mappings of hot traced pages: the fault engine reaches
 * a page it completes many accesses on through a read-write alias, with
 * no system call, while the page itself stays closed at its own address.
 * The page's bytes move into a memfd mapped at both places; what would
 * treat a shared page unlike the private one it was (a fork, an mremap,
 * a madvise that drops pages) is done by hand (traced_set.c), and
 * before a fork the pages are private again.
 *
 * Pages change (made, given back, forgotten) only inside one of the
 * traced set's changes (traced_set.c: its lock held, no completion in
 * flight); alias_at is asked inside completions, which no change
 * overlaps.
 */
#ifndef MEMTAP_PRELOAD_ALIAS_H
#define MEMTAP_PRELOAD_ALIAS_H

#include <stddef.h>
#include <stdint.h>

#include "preload/core/fmt.h"

/* Reads MEMTAP_FAULT_ALIAS (off: none made) and how hot a page must be
 * (eager: its first completion), and takes the functions that read and
 * write closed pages (through /proc/self/mem); at start-up, before other
 * threads. */
void alias_init(int eager, int (*read)(void *buf, size_t n, uint64_t addr),
                int (*write)(uint64_t addr, const void *buf, size_t n));
/* Whether aliases may be made (then pokes and peeks of traced memory go
 * inside completions). */
int alias_enabled(void);
/* The alias of addr when its page has one, else NULL. */
uint8_t *alias_at(uintptr_t addr);
/* One more completion on page: whether it is now hot enough to alias. */
int alias_heat(uintptr_t page);
/* Moves page (closed) into the memfd and maps its alias, closed at the
 * page's address; 0, or -1 (it stays as it was). */
int alias_make(uintptr_t page);
/* Forgets the aliases of [start, end) (unmapped: nothing to copy). */
void alias_forget(uintptr_t start, uintptr_t end);
/* Whether a page of [start, end) has an alias. */
int alias_within(uintptr_t start, uintptr_t end);
/* The aliased pages of [start, end) read zeros (their private twins'
 * madvise(MADV_DONTNEED) would). */
void alias_zero(uintptr_t start, uintptr_t end);
/* mremap(old, old_len, new_len, flags, want) of whole pages some of
 * which have aliases, which split the range's mapping (one mapping is
 * what the kernel moves): its pieces moved one at a time, the aliases
 * following them, the growth a new mapping with rights prot.  The call's
 * result. */
long alias_remap(uintptr_t old, size_t old_len, size_t new_len, int flags, uintptr_t want,
                 int prot);
/* How many pages have an alias now. */
uint32_t alias_count(void);
/* No aliases are made between alias_hold and alias_release (a fork). */
void alias_hold(void);
void alias_release(void);
/* Makes the aliased pages of [start, end) private again, each with the
 * rights prot_of gives: `alone` when no other thread runs (the pages then
 * merge with their neighbours' mappings again). */
void alias_restore(uintptr_t start, uintptr_t end, int (*prot_of)(uintptr_t page), int alone);
/* In a forked child: the parent's memfd let go (the parent made every
 * page private before the fork). */
void alias_after_fork_child(void);
/* key=value lines for the trace's closing statistics. */
void alias_end_stats(fmt_buf *b);

#endif
