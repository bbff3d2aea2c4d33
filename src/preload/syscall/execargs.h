/*
 * execargs.h - execve/execveat made by trapped code.  Its path, arguments
 * and environment may lie in traced (protected) memory, which the kernel
 * cannot read; they are copied into memory of memtap's own first, so no
 * page of the program is opened, and the fault engine stays on when the
 * call fails.  A child that shares the parent's memory (vfork,
 * posix_spawn, system, popen) leaves its copy behind when it execs: the
 * parent's thread, whose thread-local storage the child shared, frees it
 * the next time it enters memtap.
 */
#ifndef MEMTAP_PRELOAD_EXECARGS_H
#define MEMTAP_PRELOAD_EXECARGS_H

#include <signal.h>

/* Runs execve (nr SYS_execve) or execveat with the arguments a[] on
 * copies, with the program's signal mask.  Returns only if the call fails
 * (a negative errno). */
long execargs_run(long nr, const long *a, const sigset_t *program_mask);

/* Frees a copy a vfork-like child of this thread left behind. */
void execargs_reclaim(void);

#endif
