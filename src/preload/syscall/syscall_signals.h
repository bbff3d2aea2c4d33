/*
 * syscall_signals.h - the program's signal state as the SIGSYS handler
 * sees it: its calls on masks and alternate stacks answered there, and
 * the calls that wait, made with the signals that may end their wait.
 */
#ifndef MEMTAP_PRELOAD_SYSCALL_SIGNALS_H
#define MEMTAP_PRELOAD_SYSCALL_SIGNALS_H

#include <signal.h>
#include <stdint.h>
#include <ucontext.h>

/* rt_sigprocmask(how, set, old, size) on the interrupted code's mask in
 * uc, which the kernel puts back when the handler returns. */
long syscall_sigprocmask(ucontext_t *uc, long how, const uint64_t *set,
                         uint64_t *old, long size);

/* sigaltstack(ss, old) for the program under the fault engine, answered
 * from its stack kept per thread. */
long syscall_sigaltstack(const ucontext_t *uc, const stack_t *ss,
                         stack_t *old);

/* Makes call nr (arguments a) for the program from the SIGSYS handler
 * (uc), which may wait: under the program's own mask where its handlers
 * may run nested (unmasked: the static engine), else with the signals it
 * lets through or is interrupted by (see syscall_signals.c).  Its result,
 * or WAIT_CALL_RESTART: the program's call is to be made again after the
 * handlers of the signals that came. */
long syscall_call_waiting(ucontext_t *uc, int unmasked, long nr,
                          const long *a);

/* The signals (bit sig - 1) that are to end call nr's wait when it is
 * made another way (bounce.h) under the fault engine. */
uint64_t syscall_signals_waking(long nr, const long *a, const ucontext_t *uc);

#endif
