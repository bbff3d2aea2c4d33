/*
 * traced_set.h - the traced set: the memory whose accesses memtap records
 * (data and bss of the program and its libraries, heap blocks, mappings),
 * kept in the page map with each page's kind and the program's own
 * rights.  Under the fault engine its pages are protected, and opened
 * for a while, with a count, for memtap's own work (the page lock and the
 * counts are for the engine's handlers); the static engine and the
 * filters ask it which accesses to keep.
 */
#ifndef MEMTAP_PRELOAD_TRACED_SET_H
#define MEMTAP_PRELOAD_TRACED_SET_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "pagemap.h"

/* Keeps the traced set without the engine (nothing is protected): the
 * static engine asks it which accesses MadT records.  0, or -1. */
int traced_init(void);
/* From now on the traced set's pages are protected (the engine is on). */
void traced_protect_pages(void);

/* Who hears of changes to the mappings under the traced set (a shadow
 * tool's shadow follows them): an unmapping, a move (mremap), a fixed
 * mapping about to be made over [addr, addr+len). */
typedef struct traced_map_listener {
    void (*unmapped)(uintptr_t start, uintptr_t end);
    void (*moved)(uintptr_t old, size_t old_len, uintptr_t new_addr,
                  size_t new_len);
    void (*before_fixed)(uintptr_t addr, size_t len);
} traced_map_listener;
/* Sets the listener (at start, before the program runs; one at most). */
void traced_set_listener(const traced_map_listener *l);
/* Whether the traced set is kept (the engine, or tracking alone). */
int traced_kept(void);
/* The kind of traced memory addr lies in: PM_HEAP, PM_STATIC or 0. */
uint8_t traced_region(uintptr_t addr);
/* traced_region(addr), and in [*lo, *hi) memory around addr of the same
 * region (within 128 MiB: a cache's span of answers). */
uint8_t traced_region_span(uintptr_t addr, uintptr_t *lo, uintptr_t *hi);
/* Changes after any page's region may have: answers of traced_region_span
 * taken after it hold while it stays the same. */
uint64_t traced_regions_generation(void);

/* Adds [start, end) to the traced set with its own rights `prot`, as
 * memory of kind `region` (PM_HEAP or PM_STATIC, with PM_SHARED for a
 * shared mapping). */
void traced_add(uintptr_t start, uintptr_t end, int prot, int region);
/* Removes [start, end) from the traced set (it was unmapped). */
void traced_remove(uintptr_t start, uintptr_t end);
/* munmap(a[0], a[1]), or mmap(a[0], ..., a[5]) with MAP_FIXED (nr says
 * which; the shadow tools hear of the latter first), and, when it
 * succeeds, traced_remove of [a[0], a[0] + a[1]), as
 * one step for the other threads: a mapping another thread makes at the
 * same address is tracked after it, never before (its new state would be
 * cleared, its pages left closed).  The system call's result. */
long traced_unmap(long nr, const long *a);
/* A mapping moved (mremap): its traced state follows it. */
void traced_move(uintptr_t old, size_t old_len, uintptr_t new_addr,
                size_t new_len);
/* The program's mprotect of [start, start+len): made, its rights
 * remembered for the traced pages, which stay closed (the call's
 * result). */
long traced_mprotect(uintptr_t start, size_t len, int prot);

/* Starts or stops trapping accesses (memtap_start / memtap_stop). */
void traced_set_active(int on);
int traced_active(void);

/* Gives [addr, addr+len) back its rights for memtap's own work on the
 * program's behalf (block operations, system calls); traced_close undoes
 * it.  Nests; a page closes when its last opener closes it. */
typedef struct traced_open_set {
    uintptr_t pages[64];
    int n;
    int overflow;       /* more pages than fit: everything was opened */
} traced_open_set;
void traced_open(traced_open_set *s, uintptr_t addr, size_t len);
void traced_close(traced_open_set *s);

/* Stops tracing the pages of [start, end) for good, the program's own
 * rights given back (the mapping stays). */
void traced_stop(uintptr_t start, uintptr_t end);

/* A completion on addr's page, closed, made: when the page is hot, it
 * gets an alias (alias.h), made as one change. */
void traced_alias_hot(uintptr_t addr);
/* The program's mremap(old, old_len, new_len, flags, want): made, by
 * hand when aliased pages, or pages once aliased, split the range (the
 * call's result). */
long traced_remap(uintptr_t old, size_t old_len, size_t new_len, int flags, uintptr_t want);
/* The program's madvise dropped [start, start+len) (MADV_DONTNEED): the
 * aliased pages there read zeros too. */
void traced_dropped(uintptr_t start, size_t len);
/* Before a fork: the aliased pages private again (a shared page would
 * be the child's too), and none made until alias_release (after it). */
void traced_before_fork(void);
/* In a forked child: the other threads' completions, changes and lock,
 * counted or held when it forked, are not its own. */
void traced_after_fork_child(void);

/* Whether any page of [addr, addr+len) is traced. */
int traced_has(uintptr_t addr, size_t len);
/* Whether every page of [addr, addr+len) is traced and the program's own
 * rights let it be read (and written, if `write`). */
int traced_allows(uintptr_t addr, size_t len, int write);
/* Whether a page of [addr, addr+len) is traced and the program itself
 * made it inaccessible (a guard page): the kernel's EFAULT is the
 * program's, not memtap's protection. */
int traced_refused(uintptr_t addr, size_t len);

/* The lock of the open counts and of every mprotect of a traced page.
 * Take it directly only where every asynchronous signal is held off (a
 * memtap handler); elsewhere through traced_lock_guarded. */
void traced_lock(void);
void traced_unlock(void);
/* Holds off every asynchronous signal (a program handler, the park
 * signal) around the lock when the caller is not in a masked handler:
 * returns whether it did, for traced_unlock_guarded. */
int traced_lock_guarded(sigset_t *old);
void traced_unlock_guarded(int guard, const sigset_t *old);
/* Blocks the asynchronous signals, saving the mask in *old / restores it. */
void traced_guard_signals(sigset_t *old);
void traced_unguard_signals(const sigset_t *old);

/* Adds the traced pages of [addr, addr+len) to s (once each; overflow
 * set when they do not fit). */
void traced_pages_add(traced_open_set *s, uintptr_t addr, size_t len);
/* Opens s's pages from index `from` on (lock held). */
void traced_pages_open_locked(traced_open_set *s, int from);
/* Closes one opening of page (lock held): the page goes back to no rights
 * when it was the last and the engine is active. */
void traced_page_close_locked(uintptr_t page);

/* Brackets one completion of an access to [a, a+n) (no page's rights
 * change meanwhile; nothing in between may touch traced memory, which
 * could need the lock the change holds): 0 when its pages are closed, 1
 * when all can be accessed directly (open, or not traced: run the
 * instruction on them), -1 when some can (step it). */
int traced_completion_begin(uintptr_t a, size_t n);
void traced_completion_end(void);
/* The same bracket around memtap's own reading or writing of traced
 * memory outside a completion (a system call's buffer, a futex word):
 * while it is in flight no asynchronous signal comes (a thread parked in
 * it would keep a change that stopped the world waiting for ever); it
 * waits for a change with them as they were.  Returns whether it blocked
 * them, for traced_reach_end. */
int traced_reach_begin(sigset_t *old);
void traced_reach_end(int guard, const sigset_t *old);

/* How deep the calling thread is in memtap handlers whose mask holds off
 * every asynchronous signal (fault.c sets it): there the page lock needs
 * no guard. */
int traced_masked(void);
void traced_set_masked(int depth);

#endif
