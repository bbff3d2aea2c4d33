/*
 * syscalls.h - system calls of a program whose memory is protected: a
 * seccomp filter turns the program's system calls into SIGSYS, and the
 * handler runs each one from memtap's own code with the user buffers it
 * names opened, records reads and writes as block events, and keeps the
 * traced set current when memory is mapped, unmapped or reprotected.
 */
#ifndef MEMTAP_PRELOAD_SYSCALLS_H
#define MEMTAP_PRELOAD_SYSCALLS_H

/* Installs the SIGSYS handler and the filter; 0 on success. */
int syscalls_init(void);
int syscalls_own_signal(int sig);
unsigned long syscalls_emulated(void);
/* Calls that failed with EFAULT and were retried with every page open. */
unsigned long syscalls_reopened(void);

#endif
