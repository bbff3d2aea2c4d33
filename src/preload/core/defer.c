/*
 * defer.c - the deferral of asynchronous signals in memtap's critical
 * sections (see defer.h).  It costs no system call when no signal comes:
 * a deferred signal is queued again to the thread and added to the mask
 * its handler returns to; the section's end restores the mask the first
 * one interrupted, which delivers them.
 */
#define _GNU_SOURCE
#include "defer.h"
#include "sys/sigbits.h"
#include "sys/rawsys.h"

#include <stdatomic.h>
#include <sys/syscall.h>
#include <ucontext.h>

static __thread int tls_depth __attribute__((tls_model("initial-exec")));
static __thread int tls_deferred __attribute__((tls_model("initial-exec")));
static __thread sigset_t tls_mask __attribute__((tls_model("initial-exec")));

void defer_enter(void)
{
    tls_depth++;
    atomic_signal_fence(memory_order_seq_cst);
}

void defer_leave(void)
{
    atomic_signal_fence(memory_order_seq_cst);
    if (--tls_depth == 0 && tls_deferred) {
        tls_deferred = 0;
        raw_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&tls_mask, 0, 8, 0,
                     0);
    }
}

int defer_until_section(int sig, const siginfo_t *si, void *ucv)
{
    sigset_t async;
    sigbits_async(&async);
    if (!sigbits_has(&async, sig) && si->si_code > 0)
        return 0;
    ucontext_t *uc = ucv;
    if (!tls_deferred) {
        tls_mask = uc->uc_sigmask;
        tls_deferred = 1;
    }
    /* pending again, and blocked once the handler returns */
    sigbits_add(&uc->uc_sigmask, sig);
    raw_syscall6(SYS_rt_tgsigqueueinfo, raw_syscall3(SYS_getpid, 0, 0, 0),
                 raw_syscall3(SYS_gettid, 0, 0, 0), sig, (long)si, 0, 0);
    return 1;
}

int defer_signal(int sig, const siginfo_t *si, void *uc)
{
    return tls_depth && defer_until_section(sig, si, uc);
}
