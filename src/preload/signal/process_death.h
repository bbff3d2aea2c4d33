/*
 * process_death.h - the end of a process by a signal, trace flushed
 * first: what the default action of a fatal signal becomes under memtap.
 */
#ifndef MEMTAP_PRELOAD_PROCESS_DEATH_H
#define MEMTAP_PRELOAD_PROCESS_DEATH_H

#include <signal.h>

/* Ends the process by sig as its default action would, trace flushed (a
 * fault's pc noted in it).  Returns only to let a fault re-execute its
 * instruction, or a sent signal be delivered again, with the default
 * action in place. */
void process_die_by_signal(int sig, const siginfo_t *si, const void *uc);

#endif
