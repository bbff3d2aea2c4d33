/*
 * signals.h - sigaction()/signal() interposition: for the signals memtap
 * keeps for itself the program's calls are remembered in its table
 * (sigtable.h), not applied; under the fault engine its handlers of
 * asynchronous signals are called through memtap; a fatal signal's
 * default action flushes the trace first.
 */
#ifndef MEMTAP_PRELOAD_SIGNALS_H
#define MEMTAP_PRELOAD_SIGNALS_H

#include <signal.h>
#include <stdint.h>

/* rt_sigaction made by trapped code (glibc's internal sigaction, a raw
 * system call), act and old in the kernel's layout; returns its result.
 * A signal memtap owns is handled like sigaction() does; for the others
 * the call is made with memtap's synchronous signals taken out of the
 * mask.  A child sharing the parent's memory (shared: vfork, posix_spawn)
 * only reads memtap's table: it is the parent's, and the child's own
 * handlers must stay memtap's until it execs (glibc's spawn child resets
 * every handler). */
long signals_raw_action(int sig, const void *act, void *old, int shared);

/* When an engine starts: the program's actions installed so far are
 * noted (sigtable_handlers), and with the fault engine its
 * handlers of asynchronous signals are called through memtap from now
 * on. */
void signals_wrap_existing(void);
/* The signals whose program handler memtap calls (bit sig - 1): a call
 * that waits lets them interrupt it (wait_call.h). */
uint64_t signals_wrapped(void);
/* Deliveries merged because a handler left the interrupted code no time. */
uint64_t signals_merged(void);

#endif
