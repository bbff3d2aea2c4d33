/*
 * futex.c - futexes in traced memory without opening their page.  A
 * FUTEX_WAIT on a closed page would fail (the kernel reads the word), and
 * opening the page for a call that blocks lets the other threads touch it
 * unseen.  Instead a private wait sleeps on a word of memtap's own, one per
 * address hash, after reading the program's word through /proc/self/mem;
 * a private wake bumps and wakes that word, then wakes the real futex
 * (a private wake never reads the page).  Waits recheck the program's word
 * every 10 ms (the kernel's own wakes, at a thread's exit, reach only the
 * real futex) and end with EINTR when a signal the program takes is
 * pending, so its handler runs; the signals whose handlers memtap calls
 * are unblocked meanwhile and end the wait as they would the real one
 * (wait_call.h: a process's signal then comes to this thread, as to one
 * blocked in the kernel's wait, not to another; Python's main thread
 * waited out its lock's timeout); a timeout ends them with ETIMEDOUT as
 * the kernel would.  The other futex operations keep the general path.
 */
#define _GNU_SOURCE
#include "futex.h"

#include "complete.h"
#include "fault.h"
#include "preload/core/stop_world.h"
#include "sys/hash.h"
#include "sys/rawsys.h"
#include "preload/core/wait_call.h"

#include <errno.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>

#define SLOTS 1024
#define SLICE_NS 10000000

static _Atomic uint32_t slot_words[SLOTS];

static _Atomic uint32_t *slot_of(uint64_t uaddr)
{
    return &slot_words[fib_mix(uaddr >> 2) % SLOTS];
}

/* Whether a signal the program does not block is pending. */
static int signal_pending(const sigset_t *program_mask)
{
    uint64_t pending = 0, blocked;
    raw_syscall3(SYS_rt_sigpending, &pending, 8, 0);
    __builtin_memcpy(&blocked, program_mask, sizeof blocked);
    return (pending & ~blocked) != 0;
}

/* Sleeps on the slot of uaddr while the program's word there is val: up
 * to `deadline` on `clock` (no limit when clock is -1). */
static long wait_on_slot(uint64_t uaddr, uint32_t val, clockid_t clock,
                         int64_t deadline, const sigset_t *program_mask,
                         uint64_t unblock)
{
    _Atomic uint32_t *slot = slot_of(uaddr);
    for (;;) {
        uint32_t gen = atomic_load(slot), now;
        if (complete_peek(&now, sizeof now, uaddr) != 0)
            return -EFAULT;
        if (now != val)
            return -EAGAIN;
        int64_t left = SLICE_NS;
        if (clock != (clockid_t)-1) {
            left = deadline - raw_clock_ns(clock);
            if (left <= 0)
                return -ETIMEDOUT;
            if (left > SLICE_NS)
                left = SLICE_NS;
        }
        struct timespec slice = { 0, (long)left };
        long b[6] = { (long)slot, FUTEX_WAIT_PRIVATE, gen, (long)&slice, 0, 0 };
        int caught;
        long r = wait_call(SYS_futex, b, unblock, &caught);
        if (r == 0 || r == -EAGAIN)
            return 0; /* woken, or a wake came before the sleep */
        if (caught) /* as the kernel: a timed wait is not made again */
            return clock == (clockid_t)-1 && r == WAIT_CALL_RESTART ? r : -EINTR;
        if (signal_pending(program_mask))
            return -EINTR;
    }
}

/* The deadline of a wait's timeout (FUTEX_WAIT: relative, on the
 * monotonic clock; FUTEX_WAIT_BITSET: absolute, on the clock the
 * operation names): 0, or -1 when it cannot be read where it is. */
static int deadline_of(const long *a, int cmd, clockid_t *clock,
                       int64_t *deadline)
{
    *clock = (clockid_t)-1;
    if (!a[3])
        return 0;
    uintptr_t ts = (uintptr_t)a[3];
    struct timespec t;
    struct iovec local = { &t, sizeof t }, remote = { (void *)ts, sizeof t };
    long pid = raw_syscall3(SYS_getpid, 0, 0, 0);
    /* a traced one through /proc/self/mem (its page stays closed), else
     * as the kernel would read it, rights and all */
    int read = traced_has(ts, sizeof t)
                   ? traced_allows(ts, sizeof t, 0) && complete_peek(&t, sizeof t, ts) == 0
                   : raw_syscall6(SYS_process_vm_readv, pid, (long)&local, 1, (long)&remote,
                                  1, 0) == (long)sizeof t;
    if (!read || t.tv_nsec < 0 || t.tv_nsec >= 1000000000 || t.tv_sec < 0)
        return -1; /* the kernel's EFAULT or EINVAL */
    int64_t ns = (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
    if (cmd == FUTEX_WAIT) {
        *clock = CLOCK_MONOTONIC;
        *deadline = raw_clock_ns(CLOCK_MONOTONIC) + ns;
    } else {
        *clock = ((int)a[1] & FUTEX_CLOCK_REALTIME) ? CLOCK_REALTIME
                                                     : CLOCK_MONOTONIC;
        *deadline = ns;
    }
    return 0;
}

int futex_emulates_op(int op)
{
    switch (op & FUTEX_CMD_MASK) {
    case FUTEX_WAIT: case FUTEX_WAIT_BITSET: case FUTEX_WAKE: case FUTEX_WAKE_BITSET:
        return (op & FUTEX_PRIVATE_FLAG) != 0;
    default:
        return 0;
    }
}

int futex_emulate(const long *a, const sigset_t *program_mask,
                  uint64_t unblock, long *ret)
{
    uint64_t uaddr = (uint64_t)a[0];
    int op = (int)a[1], cmd = op & FUTEX_CMD_MASK;
    if (!futex_emulates_op(op) || (uaddr & 3) || complete_fd() < 0 ||
        !traced_active() || !traced_has(uaddr, 4))
        return 0;
    switch (cmd) {
    case FUTEX_WAIT:
    case FUTEX_WAIT_BITSET: {
        clockid_t clock;
        int64_t deadline = 0;
        if ((cmd == FUTEX_WAIT_BITSET && (uint32_t)a[5] == 0) ||
            deadline_of(a, cmd, &clock, &deadline) != 0)
            return 0; /* the kernel's answer, in the general path */
        /* waiting, the thread counts as parked for a stop (stop_world.h):
         * the park signal would find it inside memtap's handler, where it
         * waits for the handler to end, and a JVM's threads wait on their
         * monitors for seconds */
        world_wait_begin();
        *ret = wait_on_slot(uaddr, (uint32_t)a[2], clock, deadline,
                            program_mask, unblock);
        world_wait_end();
        return *ret != -EFAULT;
    }
    case FUTEX_WAKE:
    case FUTEX_WAKE_BITSET: {
        _Atomic uint32_t *slot = slot_of(uaddr);
        atomic_fetch_add(slot, 1);
        long woken = raw_syscall6(SYS_futex, (long)slot, FUTEX_WAKE_PRIVATE,
                                  0x7fffffff, 0, 0, 0);
        long real = raw_syscall6(SYS_futex, a[0], a[1], a[2], a[3], a[4],
                                 a[5]);
        if (RAW_FAILED(real))
            *ret = real;
        else
            *ret = woken + real < a[2] ? woken + real : a[2];
        return 1;
    }
    default:
        return 0;
    }
}
