/*
 * own_signals.h - the signals memtap's engines have taken for themselves
 * (SIGSEGV and SIGTRAP of the fault engine, SIGSYS of the system call
 * filter, the stop-the-world signal, the static engine's traps and fault
 * signals).  An engine claims a signal once its handler is installed;
 * the interposed signal functions ask here, not the engines, which signals
 * the program may not take or block.  Lock-free: asked from handlers.
 */
#ifndef MEMTAP_PRELOAD_OWN_SIGNALS_H
#define MEMTAP_PRELOAD_OWN_SIGNALS_H

#include <signal.h>

/* Marks sig (1..64) as memtap's from now on. */
void own_signals_claim(int sig);

/* Whether an engine has claimed sig. */
int own_signals_has(int sig);

/* Takes the synchronous signals memtap has claimed (SIGSEGV, SIGTRAP,
 * SIGSYS) out of a mask: blocked, the kernel would kill a process whose
 * fault or trap arrives (a program handler whose mask is full, as dash's
 * are, would die on its first access).  Returns whether it changed m. */
int own_signals_strip(sigset_t *m);

#endif
