/*
 * syscall_signals.h - the program's signal state as the SIGSYS handler
 * sees it: its calls on masks and alternate stacks answered there, and
 * the signals a waiting call lets through.
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

/* Whether call nr may wait for another process, a device or the clock
 * (WAITS), and whether, interrupted by a handled signal, it then returns
 * EINTR whatever the handler's SA_RESTART (WAITS_ENDS_EARLY: those with a
 * timeout); 0 for a call that does not wait. */
enum { WAITS = 1, WAITS_ENDS_EARLY };
int syscall_waits(long nr);

/* The signals (bit sig - 1) call nr lets through while it waits, made
 * from the SIGSYS handler under the fault engine: those the interrupted
 * code has not blocked whose action stops or ends the process; 0 for a
 * call that does not wait. */
uint64_t syscall_signals_passing(long nr, const ucontext_t *uc);

/* The signals (bit sig - 1) whose program handlers a call nr (arguments
 * a) that waits, made from the SIGSYS handler under the fault engine, is
 * to be interrupted by (wait_call.h): those memtap calls the handler of
 * that the mask the call runs under does not block (the one it names
 * itself: pselect6, ppoll, epoll_pwait(2), which the kernel swaps in for
 * the call; else the interrupted code's); 0 for a call that does not
 * wait. */
uint64_t syscall_signals_caught(long nr, const long *a, const ucontext_t *uc);

#endif
