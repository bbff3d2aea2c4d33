/*
 * sys/futex_lock.h - the lock of memtap's critical sections that many
 * threads of a traced process may want at once on few cores (the fault
 * engine's page table, its completions): it spins a little, then sleeps
 * on a futex, so a holder that loses its core does not leave the others
 * spinning for a whole time slice.  Raw system calls only, no allocation:
 * usable in signal handlers, held with the signals that could take it
 * blocked (the callers see to it).  0 free, 1 held, 2 held and maybe
 * waited for.
 */
#ifndef MEMTAP_SYS_FUTEX_LOCK_H
#define MEMTAP_SYS_FUTEX_LOCK_H

#include "sys/rawsys.h"

#include <linux/futex.h>
#include <stdatomic.h>
#include <sys/syscall.h>

static inline void futex_lock(atomic_int *l)
{
    for (int i = 0; i < 64; i++) {
        int free_ = 0;
        if (atomic_compare_exchange_weak(l, &free_, 1))
            return;
        __builtin_ia32_pause();
    }
    while (atomic_exchange(l, 2) != 0)
        raw_syscall6(SYS_futex, (long)l, FUTEX_WAIT_PRIVATE, 2, 0, 0, 0);
}

static inline void futex_unlock(atomic_int *l)
{
    if (atomic_exchange(l, 0) == 2)
        raw_syscall6(SYS_futex, (long)l, FUTEX_WAKE_PRIVATE, 1, 0, 0, 0);
}

#endif
