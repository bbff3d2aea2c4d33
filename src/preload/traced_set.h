/*
 * traced_set.h - the fault engine's page lock and the open counts of
 * traced pages (traced_set.c), for its handlers in fault.c.  The traced
 * set's own interface (fault_track, fault_open, ...) is in fault.h.
 */
#ifndef MEMTAP_PRELOAD_TRACED_SET_H
#define MEMTAP_PRELOAD_TRACED_SET_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "fault.h"

/* The lock of the open counts and of every mprotect of a traced page.
 * Take it directly only where every asynchronous signal is held off (a
 * memtap handler); elsewhere through pages_lock_guarded. */
void pages_lock(void);
void pages_unlock(void);
/* Holds off every asynchronous signal (a program handler, the park
 * signal) around the lock when the caller is not in a masked handler:
 * returns whether it did, for pages_unlock_guarded. */
int pages_lock_guarded(sigset_t *old);
void pages_unlock_guarded(int guard, const sigset_t *old);
/* Blocks the asynchronous signals, saving the mask in *old / restores it. */
void pages_guard_signals(sigset_t *old);
void pages_unguard_signals(const sigset_t *old);

/* Adds the traced pages of [addr, addr+len) to s (once each; overflow
 * set when they do not fit). */
void pages_add(fault_open_set *s, uintptr_t addr, size_t len);
/* Opens s's pages from index `from` on (lock held). */
void pages_open_locked(fault_open_set *s, int from);
/* Closes one opening of page (lock held): the page goes back to no rights
 * when it was the last and the engine is active. */
void page_close_locked(uintptr_t page);

/* Brackets one completion of an access to [a, a+n) (no page's rights
 * change meanwhile; nothing in between may touch traced memory, which
 * could need the lock the change holds): 0 when its pages are closed, 1
 * when all can be accessed directly (open, or not traced: run the
 * instruction on them), -1 when some can (step it). */
int pages_completion_begin(uintptr_t a, size_t n);
void pages_completion_end(void);

/* How deep the calling thread is in memtap handlers whose mask holds off
 * every asynchronous signal (fault.c sets it): there the page lock needs
 * no guard. */
int fault_masked(void);
void fault_set_masked(int depth);

#endif
