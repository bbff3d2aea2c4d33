/*
 * signals.h - the program's own dispositions for the signals memtap keeps
 * for itself (SIGSEGV and SIGTRAP for the fault engine, SIGSYS for system
 * call emulation): sigaction()/signal() calls are remembered, not applied,
 * and signals that are not memtap's are passed on to them.
 */
#ifndef MEMTAP_PRELOAD_SIGNALS_H
#define MEMTAP_PRELOAD_SIGNALS_H

#include <signal.h>

/* Delivers a signal memtap does not consume to the program's handler, or
 * ends the process as the default action would (after flushing). */
void signals_chain(int sig, siginfo_t *si, void *uc);

/* memtap takes sig over now: the disposition the program had set becomes
 * the one sigaction() reports and signals_chain() delivers to. */
void signals_adopt(int sig, const struct sigaction *had);

/* Ends the process by sig as its default action would, trace flushed. */
void process_die_by_signal(int sig, const siginfo_t *si);

#endif
