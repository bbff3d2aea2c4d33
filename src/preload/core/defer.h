/*
 * defer.h - asynchronous signals held back while a thread is in a short
 * critical section of memtap's (a hot site's access, the hand-over of
 * the log buffer): memtap's handlers ask defer_signal first.
 */
#ifndef MEMTAP_PRELOAD_DEFER_H
#define MEMTAP_PRELOAD_DEFER_H

#include <signal.h>

/* Enters and leaves the calling thread's critical section (they nest);
 * the last leave delivers what came meanwhile. */
void defer_enter(void);
void defer_leave(void);

/* Called first by each of memtap's handlers of asynchronous signals: 1
 * when the thread is in a critical section, which the signal must not
 * interrupt (the handler returns at once; the signal is queued again,
 * blocked until the section ends), else 0.  A signal an instruction
 * raised (a fault) is never deferred: it would be raised again. */
int defer_signal(int sig, const siginfo_t *si, void *uc);

/* defer_signal for a thread about to enter a critical section (its code
 * at uc is on the way in, nothing between): the section's end delivers
 * it.  0 for a fault, as defer_signal. */
int defer_until_section(int sig, const siginfo_t *si, void *uc);

#endif
