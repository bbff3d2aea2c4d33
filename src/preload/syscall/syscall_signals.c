/*
 * syscall_signals.c - the program's signal state as the SIGSYS handler
 * sees it (syscalls.c): rt_sigprocmask on the interrupted code's mask,
 * sigaltstack kept per thread under the fault engine, and the calls that
 * wait, made with the signals they let through or are interrupted by.
 */
#define _GNU_SOURCE
#include "syscall_signals.h"
#include "preload/signal/sigtable.h"
#include "signals.h"
#include "preload/fault/complete.h"
#include "preload/fault/fault.h"
#include "preload/core/stop_world.h"
#include "preload/core/wait_call.h"
#include "sys/rawsys.h"


#include <errno.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>

/* rt_sigprocmask on the mask of the interrupted code (uc), which the
 * kernel puts back when this handler returns: a change made to the thread's
 * mask here would be undone, and a query would see this handler's.  The
 * signals memtap runs on stay deliverable (the kernel's set is 8 bytes: bit
 * n-1 for signal n). */
long syscall_sigprocmask(ucontext_t *uc, long how, const uint64_t *set,
                         uint64_t *old, long size)
{
    static const uint64_t keep =
        (1ull << (SIGSEGV - 1)) | (1ull << (SIGTRAP - 1)) |
        (1ull << (SIGSYS - 1)) | (1ull << (SIGKILL - 1)) |
        (1ull << (SIGSTOP - 1)) | (1ull << (__SIGRTMAX - 2));
    if (size != 8)
        return -EINVAL;
    uint64_t cur = uc->uc_sigmask.__val[0], was = cur;
    if (set) {
        uint64_t v = *set; /* a traced page is opened as memtap's own */
        switch (how) {
        case SIG_BLOCK: cur |= v; break;
        case SIG_UNBLOCK: cur &= ~v; break;
        case SIG_SETMASK: cur = v; break;
        default: return -EINVAL;
        }
    }
    if (old)
        *old = was;
    uc->uc_sigmask.__val[0] = cur & ~keep;
    return 0;
}

/* The program's alternate signal stack of this thread, under the fault
 * engine (syscall_sigaltstack); its size 0 while it has none, its flags
 * SS_DISABLE once the program disabled it. */
static __thread stack_t tls_program_altstack
    __attribute__((tls_model("initial-exec")));

/* sigaltstack for the program (under either engine).  The call cannot be
 * made from here (this handler runs on memtap's alternate stack: EPERM),
 * and the program's stack must not replace memtap's (its handlers need
 * the room, and a traced page could not take a signal frame): the
 * program's is kept per thread and answered as the kernel would, and its
 * SA_ONSTACK handlers run on memtap's (which is the answer where the
 * program set none).  Traced pages of ss and old are
 * opened as memtap's own. */
long syscall_sigaltstack(const ucontext_t *uc, const stack_t *ss,
                         stack_t *old)
{
    stack_t *cur = &tls_program_altstack;
    /* on it: the interrupted code runs on the real one (here the flags
     * of a frame nested on it lacked SS_ONSTACK) */
    uint64_t sp = (uint64_t)uc->uc_mcontext.gregs[REG_RSP];
    uint64_t base = (uint64_t)(uintptr_t)uc->uc_stack.ss_sp;
    int on = sp - base < uc->uc_stack.ss_size;
    /* A thread whose program never set one is told of memtap's, which its
     * handlers run on: a program that checks where its handler runs (Go's
     * runtime adopts the stack it finds at thread start, and dies on one
     * it was not told of) sees the truth.  One it disabled stays disabled
     * (cur's ss_flags SS_DISABLE). */
    stack_t was = *cur;
    if (!cur->ss_size && !(cur->ss_flags & SS_DISABLE))
        was = (stack_t){ uc->uc_stack.ss_sp, 0, uc->uc_stack.ss_size };
    was.ss_flags = !was.ss_size ? SS_DISABLE : on ? SS_ONSTACK : 0;
    on = on && cur->ss_size; /* the program's own is in use */
    if (ss) {
        stack_t want = *ss;
        int mode = want.ss_flags & ~(1 << 31); /* SS_AUTODISARM */
        if (on)
            return -EPERM;
        if (mode != SS_DISABLE && mode != SS_ONSTACK && mode != 0)
            return -EINVAL;
        if (mode == SS_DISABLE)
            want = (stack_t){ NULL, SS_DISABLE, 0 };
        else if (want.ss_size < 2048) /* the kernel's MINSIGSTKSZ (the C
                                          library's asks sysconf) */
            return -ENOMEM;
        *cur = want;
    }
    if (old)
        *old = was;
    return 0;
}

/* Whether call nr may wait for another process, a device or the clock
 * (WAITS), and whether, interrupted by a handled signal, it then returns
 * EINTR whatever the handler's SA_RESTART (WAITS_ENDS_EARLY: those with a
 * timeout); 0 for a call that does not wait. */
enum { WAITS = 1, WAITS_ENDS_EARLY };
static int syscall_waits(long nr)
{
    switch (nr) {
    case SYS_read: case SYS_readv: case SYS_write: case SYS_writev:
    case SYS_recvfrom: case SYS_recvmsg: case SYS_recvmmsg:
    case SYS_sendto: case SYS_sendmsg: case SYS_sendmmsg:
    case SYS_accept: case SYS_accept4: case SYS_connect:
    case SYS_wait4: case SYS_waitid: case SYS_open: case SYS_openat:
    case SYS_ioctl: case SYS_fcntl: case SYS_flock:
        return WAITS;
    case SYS_poll: case SYS_ppoll: case SYS_select: case SYS_pselect6:
    case SYS_epoll_wait: case SYS_epoll_pwait: case SYS_epoll_pwait2:
    case SYS_nanosleep:
    case SYS_clock_nanosleep: case SYS_rt_sigtimedwait:
        return WAITS_ENDS_EARLY;
    default:
        return 0;
    }
}

/* Whether call nr with arguments a may wait: syscall_waits, and a futex
 * wait (restarted after an SA_RESTART handler, as read is). */
static int waits(long nr, const long *a)
{
    int cmd = (int)a[1] & FUTEX_CMD_MASK;
    return syscall_waits(nr) ||
           (nr == SYS_futex && (cmd == FUTEX_WAIT || cmd == FUTEX_WAIT_BITSET));
}

/* Signals that, at their default action, stop or end the process. */
#define SIGBIT(s) (1ull << ((s) - 1))
#define ENDING_SIGNALS                                                     \
    (SIGBIT(SIGHUP) | SIGBIT(SIGINT) | SIGBIT(SIGQUIT) | SIGBIT(SIGPIPE) | \
     SIGBIT(SIGALRM) | SIGBIT(SIGTERM) | SIGBIT(SIGUSR1) |                 \
     SIGBIT(SIGUSR2) | SIGBIT(SIGTSTP) | SIGBIT(SIGTTIN) |                 \
     SIGBIT(SIGTTOU) | SIGBIT(SIGXCPU) | SIGBIT(SIGXFSZ) |                 \
     SIGBIT(SIGVTALRM) | SIGBIT(SIGPROF))

/* The signals (bit sig - 1) call nr lets through while it waits, made
 * from the SIGSYS handler under the fault engine: those the interrupted
 * code has not blocked whose action stops or ends the process; 0 for a
 * call that does not wait. */
static uint64_t passing_signals(long nr, const long *a, const ucontext_t *uc)
{
    if (!waits(nr, a))
        return 0;
    return ~uc->uc_sigmask.__val[0] & ~sigtable_handlers() &
           ENDING_SIGNALS;
}

/* The call, the signals of `unblock` unblocked meanwhile (wait_call.h).
 * With the program's handlers not run here (`ours`), an EINTR is
 * memtap's park signal's, which the program never sees, unless a signal
 * whose handler memtap calls came, and the call is made again: a
 * relative sleep goes on for what it had left (the remainder in memtap's
 * own timespec, written to the program's where natively, on a signal of
 * its own); select, pselect6 and ppoll have their timeouts updated by the
 * kernel; poll, epoll_wait and sigtimedwait wait their whole timeout
 * again.  A call the kernel would not restart after a handler (those that
 * end early: poll, select, sleeps) gives -EINTR, not WAIT_CALL_RESTART. */
static long call_waiting(long nr, const long *a, int ours, uint64_t unblock)
{
    long b[6];
    memcpy(b, a, sizeof b);
    struct timespec left;
    int rem_at = !ours ? 0
                 : nr == SYS_nanosleep ? 1
                 : nr == SYS_clock_nanosleep && !(a[1] & TIMER_ABSTIME) ? 3
                                                                         : 0;
    if (rem_at)
        b[rem_at] = (long)&left;
    int ends_early = syscall_waits(nr) == WAITS_ENDS_EARLY, caught;
    world_wait_begin();
    long ret;
    for (;;) {
        ret = wait_call(nr, b, unblock, &caught);
        if (ret != -EINTR || caught || !ours || !ends_early)
            break;
        if (rem_at)
            b[rem_at - 1] = (long)&left;
    }
    world_wait_end();
    if (ret == WAIT_CALL_RESTART && ends_early)
        ret = -EINTR;
    if (ret == -EINTR && caught && rem_at && a[rem_at] &&
        complete_poke((uint64_t)a[rem_at], &left, sizeof left) != 0)
        ret = -EFAULT;
    return ret;
}

/* The signals (bit sig - 1) whose program handlers are to interrupt call
 * nr (arguments a) that waits, made from the SIGSYS handler under the
 * fault engine (wait_call.h): those memtap calls the handler of that the
 * mask the call runs under does not block (the one it names itself:
 * pselect6, ppoll, epoll_pwait(2), which the kernel swaps in for the
 * call; else the interrupted code's); none for memtap's own calls or a
 * call that does not wait. */
static uint64_t caught_signals(long nr, const long *a, const ucontext_t *uc)
{
    if (fault_nested_in_memtap() || !waits(nr, a))
        return 0;
    uint64_t blocked = uc->uc_sigmask.__val[0], set = 0;
    if (nr == SYS_pselect6 && a[5]) {
        uint64_t arg[2]; /* the set's address and size */
        if (complete_peek(arg, sizeof arg, (uint64_t)a[5]) == 0)
            set = arg[0];
    } else if (nr == SYS_ppoll) {
        set = (uint64_t)a[3];
    } else if (nr == SYS_epoll_pwait || nr == SYS_epoll_pwait2) {
        set = (uint64_t)a[4];
    }
    if (set)
        complete_peek(&blocked, sizeof blocked, set);
    return signals_wrapped() & ~blocked;
}

/* What ends call nr's wait when the program's handlers cannot run nested:
 * the signals it lets through and those it is interrupted by. */
static uint64_t waking_signals(long nr, const long *a, const ucontext_t *uc)
{
    return caught_signals(nr, a, uc) | passing_signals(nr, a, uc);
}

uint64_t syscall_signals_waking(long nr, const long *a, const ucontext_t *uc)
{
    return fault_enabled() ? waking_signals(nr, a, uc) : 0;
}

/* Makes the call.  Without page protection (the static engine) it runs
 * under the program's own signal mask, as the real call would: a signal
 * that comes while it blocks (a pipe, a socket) is delivered at once (its
 * handler nested in this one) and interrupts or restarts the call as the
 * handler's SA_RESTART says, instead of waiting for the call to end.
 * Under the fault engine a program handler must not run nested here
 * (its accesses to the pages opened for the call would go unseen): a call
 * that may block lets through the signals the program has not blocked
 * whose action runs none of its code (Ctrl-C, kill, Ctrl-Z of a program
 * waiting on a pipe), and is interrupted by those whose handler memtap
 * calls, which then runs once this handler has returned (wait_call.h:
 * make -j's pselect6 woken by SIGCHLD; before, the call was made again
 * and make waited for good).  WAIT_CALL_RESTART: the program's call is to
 * be made again after that handler. */
long syscall_call_waiting(ucontext_t *uc, int unmasked, long nr,
                          const long *a)
{
    if (!unmasked || fault_nested_in_memtap())
        return call_waiting(nr, a, 1, waking_signals(nr, a, uc));
    uint64_t saved;
    raw_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&uc->uc_sigmask,
                 (long)&saved, 8, 0, 0);
    long ret = call_waiting(nr, a, 0, 0);
    raw_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&saved, 0, 8, 0, 0);
    return ret;
}
