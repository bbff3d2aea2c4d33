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
 * pending, so its handler runs.  Waits with a timeout and the other futex
 * operations keep the general path.
 */
#define _GNU_SOURCE
#include "futex.h"

#include "complete.h"
#include "fault.h"
#include "sys/hash.h"
#include "sys/rawsys.h"

#include <errno.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/syscall.h>
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

static long wait_on_slot(uint64_t uaddr, uint32_t val,
                         const sigset_t *program_mask)
{
    _Atomic uint32_t *slot = slot_of(uaddr);
    for (;;) {
        uint32_t gen = atomic_load(slot), now;
        if (complete_peek(&now, sizeof now, uaddr) != 0)
            return -EFAULT;
        if (now != val)
            return -EAGAIN;
        struct timespec slice = { 0, SLICE_NS };
        long r = raw_syscall6(SYS_futex, (long)slot, FUTEX_WAIT_PRIVATE, gen,
                              (long)&slice, 0, 0);
        if (r == 0 || r == -EAGAIN)
            return 0; /* woken, or a wake came before the sleep */
        if (signal_pending(program_mask))
            return -EINTR;
    }
}

int futex_emulate(const long *a, const sigset_t *program_mask, long *ret)
{
    uint64_t uaddr = (uint64_t)a[0];
    int op = (int)a[1], cmd = op & FUTEX_CMD_MASK;
    if (!(op & FUTEX_PRIVATE_FLAG) || (uaddr & 3) || complete_fd() < 0 ||
        !fault_active() || !fault_is_tracked(uaddr, 4))
        return 0;
    switch (cmd) {
    case FUTEX_WAIT:
    case FUTEX_WAIT_BITSET:
        if (a[3] != 0 || (cmd == FUTEX_WAIT_BITSET && (uint32_t)a[5] == 0))
            return 0; /* a timeout: the general path */
        *ret = wait_on_slot(uaddr, (uint32_t)a[2], program_mask);
        return *ret != -EFAULT;
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
