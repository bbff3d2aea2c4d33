/*
 * syscalls.h - system calls of a program whose memory is protected: a
 * seccomp filter turns the program's system calls into SIGSYS, and the
 * handler runs each one from memtap's own code with the user buffers it
 * names opened, records reads and writes as block events, and keeps the
 * traced set current when memory is mapped, unmapped or reprotected.
 */
#ifndef MEMTAP_PRELOAD_SYSCALLS_H
#define MEMTAP_PRELOAD_SYSCALLS_H

#include <stdint.h>

/* Installs the SIGSYS handler and the filter; 0 on success.  With all,
 * every call of the traced modules is trapped (the fault engine: any
 * buffer may be protected); without, only what the static engine needs:
 * calls the kernel copies user memory for (recorded as block events),
 * exec, signal actions and masks, and calls naming memtap's
 * descriptors. */
int syscalls_init(int all);
unsigned long syscalls_emulated(void);
/* Whether the system call filter is on (exit_group is then trapped). */
int syscalls_enabled(void);
/* Calls that failed with EFAULT and were retried with every page open. */
unsigned long syscalls_reopened(void);
/* Code made at run time: memory mapped (nr SYS_mmap) or made executable
 * (SYS_mprotect, SYS_pkey_mprotect; arguments a, result ret) by the
 * program's own code at pc, not the loader's (which maps libraries): a
 * JIT's, PCRE2's for grep -P say.  The static engine never sees that
 * code, so its accesses are missing: counted for the run's summary. */
void syscalls_note_code_made(long nr, const long *a, long ret, uint64_t pc);
/* Adds code_made (executable memory the program made itself, which the
 * static engine does not trace) and async_io_refused (io_uring and kernel
 * AIO set-ups answered ENOSYS) to the closing note. */
struct fmt_buf;
void syscalls_end_stats(struct fmt_buf *b);

#endif
