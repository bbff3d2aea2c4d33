/*
 * futex.h - private futex waits and wakes on words in traced memory, the
 * page left closed (see futex.c).
 */
#ifndef MEMTAP_PRELOAD_FUTEX_H
#define MEMTAP_PRELOAD_FUTEX_H

#include <signal.h>
#include <stdint.h>

/* A trapped futex call with arguments a, made by a thread whose own mask
 * is program_mask: 1 when it was handled here (*ret is its result), 0
 * when it takes the general path.  A wait lets the signals of `unblock`
 * (bit sig - 1) end it (wait_call.h: *ret -EINTR, or WAIT_CALL_RESTART
 * for a wait without a timeout). */
int futex_emulate(const long *a, const sigset_t *program_mask,
                  uint64_t unblock, long *ret);
/* Whether futex_emulate makes calls of operation op on traced words
 * (private waits and wakes). */
int futex_emulates_op(int op);

#endif
