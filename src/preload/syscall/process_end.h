/*
 * process_end.h - the ways out of the traced process, each of which ends
 * the trace first: exit_group and _exit, and the fatal signals (SIGSEGV,
 * SIGTERM, ...) left at their default action, for which memtap's handler
 * stands.
 */
#ifndef MEMTAP_PRELOAD_PROCESS_END_H
#define MEMTAP_PRELOAD_PROCESS_END_H

#include <signal.h>

/* Gives the thread memtap's stack and installs memtap's handler for every
 * fatal signal the program left at SIG_DFL (at start). */
void process_end_install_fatal(void);

/* memtap's action for a fatal signal, which stands for SIG_DFL, in *sa:
 * 1, or 0 for a signal it does not take (or before the start). */
int process_fatal_action(int sig, struct sigaction *sa);

/* Ends the trace with the process's exit status (the engines stop first,
 * unless the process is a vfork child, whose memory is its parent's). */
void process_end_trace(int status);

/* Ends the process with status, trace finished (the process's exit_group,
 * trapped: the last the program does). */
void process_exit(int status) __attribute__((noreturn));

#endif
