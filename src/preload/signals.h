/*
 * signals.h - the program's own dispositions for the signals memtap keeps
 * for itself (SIGSEGV and SIGTRAP for the fault engine, SIGSYS for system
 * call emulation): sigaction()/signal() calls are remembered, not applied,
 * and signals that are not memtap's are passed on to them.
 */
#ifndef MEMTAP_PRELOAD_SIGNALS_H
#define MEMTAP_PRELOAD_SIGNALS_H

#include <signal.h>
#include <stdint.h>

/* Delivers a signal memtap does not consume to the program's handler, or
 * ends the process as the default action would (after flushing). */
void signals_chain(int sig, siginfo_t *si, void *uc);

/* memtap takes sig over now: the disposition the program had set becomes
 * the one sigaction() reports and signals_chain() delivers to. */
void signals_adopt(int sig, const struct sigaction *had);

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
 * noted (signals_program_handlers), and with the fault engine its
 * handlers of asynchronous signals are called through memtap from now
 * on. */
void signals_wrap_existing(void);
/* Deliveries merged because a handler left the interrupted code no time. */
uint64_t signals_merged(void);
/* The signals whose program action runs a handler of its own (bit sig - 1),
 * as far as the program's sigaction calls and the fault engine's start
 * have told. */
uint64_t signals_program_handlers(void);

/* Ends the process with status, trace finished (the process's exit_group,
 * trapped: the last the program does). */
void process_exit(int status) __attribute__((noreturn));

/* memtap's action for a fatal signal (SIGSEGV, SIGTERM, ...), which stands
 * for SIG_DFL, in *sa: 1, or 0 for a signal it does not take. */
int process_fatal_action(int sig, struct sigaction *sa);

/* Ends the process by sig as its default action would, trace flushed. */
void process_die_by_signal(int sig, const siginfo_t *si, const void *uc);

#endif
