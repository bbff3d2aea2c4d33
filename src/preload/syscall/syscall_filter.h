/*
 * syscall_filter.h - the seccomp filters that turn the traced modules'
 * system calls into SIGSYS.
 */
#ifndef MEMTAP_PRELOAD_SYSCALL_FILTER_H
#define MEMTAP_PRELOAD_SYSCALL_FILTER_H

#include <stddef.h>

#define SYSCALL_FILTER_TRAPS_MAX 96

/* Installs the filter (for every thread) over the text of the modules
 * known now; 0 on success.  Calls made from it trap: with all, every one
 * but a few that take no user memory or cannot be emulated; without, those
 * in traps[0..ntraps) and those naming memtap's descriptors.  Everything
 * else (memtap's own calls, the loader's, and any process image that
 * replaces this one by exec, whose modules lie elsewhere) passes. */
int syscall_filter_init(int all, const int *traps, size_t ntraps);

/* Extends the filters to the modules loaded since (dlopen) that make
 * system calls themselves: one more filter for them, when there are any
 * (a library's calls through the C library are trapped already). */
void syscall_filter_cover_new(void);

#endif
