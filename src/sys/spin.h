/*
 * sys/spin.h - the spin lock of memtap's short critical sections in code
 * that may run inside signal handlers of traced processes (no futex, no
 * allocation): test and test-and-set, with a pause while it waits.  A
 * lock a signal handler may also take is held with that signal blocked;
 * the callers see to it.  (Locks with other semantics, an owner or a
 * world to stop, keep their own code: shadow/umbra.c, preload/stop_world.c.)
 */
#ifndef MEMTAP_SYS_SPIN_H
#define MEMTAP_SYS_SPIN_H

#include <stdatomic.h>

static inline int spin_try(atomic_int *l)
{
    return !atomic_load_explicit(l, memory_order_relaxed) &&
           !atomic_exchange(l, 1);
}

static inline void spin_acquire(atomic_int *l)
{
    while (!spin_try(l))
        while (atomic_load_explicit(l, memory_order_relaxed))
            __builtin_ia32_pause();
}

/* Sequentially consistent, as the locks it replaced were: the tracer
 * orders its buffer hand-over against this store. */
static inline void spin_release(atomic_int *l)
{
    atomic_store(l, 0);
}

#endif
