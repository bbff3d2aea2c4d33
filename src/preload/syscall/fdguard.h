/*
 * fdguard.h - memtap's descriptors in the program (the trace, the status
 * page, the fault engine's /proc/self/mem) are memtap's, not the
 * program's: close, dup2, dup3, close_range and closefrom never close them
 * or replace them.
 * libc's entry points are interposed; with the fault engine on, the
 * seccomp filter also traps the raw system calls that name it.
 */
#ifndef MEMTAP_PRELOAD_FDGUARD_H
#define MEMTAP_PRELOAD_FDGUARD_H

#define FDGUARD_MAX 4

/* memtap's descriptors, in ascending order: fills fds, returns how many. */
int fdguard_fds(int fds[FDGUARD_MAX]);

/* For a trapped call: whether it is one fdguard handles (close, dup2,
 * dup3, close_range); then *ret is its result (a negative errno). */
int fdguard_syscall(long nr, const long *a, long *ret);

#endif
