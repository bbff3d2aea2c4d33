/*
 * hot.h - the fault engine's hot sites: an instruction whose accesses the
 * SIGSEGV handler has completed often is patched at run time to jump to a
 * trampoline that completes them without a signal (the page stays closed
 * for every other instruction).
 */
#ifndef MEMTAP_PRELOAD_HOT_H
#define MEMTAP_PRELOAD_HOT_H

#include <signal.h>
#include <stdint.h>
#include <ucontext.h>


#include "preload/core/fmt.h"

/* Sets hot sites up after complete_init (MEMTAP_FAULT_PATH=complete or
 * step leaves them off).  0, or -1 when they cannot run here. */
int hot_init(void);

/* The SIGSEGV handler completed one access of insn at pc: counted, and
 * the site patched when it has become hot. */
void hot_completed(uint64_t pc, unsigned len);

/* The instruction bytes of the site patched (or being patched, or given
 * its bytes back) at pc, as they were before any patch; NULL when pc is
 * no site.  Code read at pc while another thread patches it can be torn
 * (the first bytes the instruction's, the next the jump's): whoever
 * decodes the live code at pc asks this after reading, and decodes these
 * bytes instead when there are any. */
const uint8_t *hot_site_bytes(uint64_t pc);

/* A SIGTRAP at the int3 a site's patching or unpatching wrote: uc goes
 * back to the site (the thread runs it once the bytes are whole); 1, or 0
 * when the int3 is not one of ours. */
int hot_trap(ucontext_t *uc);

/* In a forked child: a patch another thread of the parent was making is
 * not in progress here. */
void hot_after_fork(void);

/* hot_sites, hot_followers (instructions a site's trampoline runs after
 * its own), hot_accesses, hot_untraced, hot_refused, hot_unpatched. */
void hot_end_stats(fmt_buf *b);

#endif
