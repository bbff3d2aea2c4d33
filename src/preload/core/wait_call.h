/*
 * wait_call.h - a system call of the program's that may block, made by
 * memtap's SIGSYS handler under the fault engine, which the program's
 * signals interrupt as they would natively although their handlers must
 * not run nested in memtap's (the pages opened for the call): the signals
 * the program would take are unblocked around the call; memtap's handler
 * of such a signal, finding the thread here, cancels the call if it has
 * not begun or was rewound by the kernel for a restart, and keeps the
 * signal for the SIGSYS handler to deliver once its work is done
 * (wait_call_take), as the kernel would have before the call returned
 * (pselect6's mask may let through a signal the program blocks
 * otherwise).  The call returns -EINTR then, or WAIT_CALL_RESTART when
 * every caught signal's handler asks to restart calls (SA_RESTART): the
 * caller makes the program's own syscall instruction run again after the
 * handler, as the kernel does.
 */
#ifndef MEMTAP_PRELOAD_WAIT_CALL_H
#define MEMTAP_PRELOAD_WAIT_CALL_H

#include <signal.h>
#include <stdint.h>

/* wait_call's answer for a call to make again after the handlers ran (the
 * kernel's ERESTARTSYS, which no call returns to user space). */
#define WAIT_CALL_RESTART (-512L)

/* Makes call nr with arguments a, the signals in `catch` (bit sig - 1)
 * unblocked meanwhile (none: the plain call); its result, -EINTR when one of them came and its
 * handler is still to run, or WAIT_CALL_RESTART (see above).  *caught is
 * set when a signal of catch came (the call ran to its end or not). */
long wait_call(long nr, const long *a, uint64_t catch, int *caught);

/* From memtap's handler of an asynchronous signal the program handles
 * (sig, its action's flags in sa_flags), before anything else: 1 when
 * the thread is in wait_call, which then takes the signal (the handler
 * returns at once), else 0. */
int wait_call_interrupt(int sig, const siginfo_t *si, void *uc, int sa_flags);

/* A signal a wait_call took, the oldest first, to deliver now (*sig and
 * *si); 0 when none is left. */
int wait_call_take(int *sig, siginfo_t *si);

#endif
