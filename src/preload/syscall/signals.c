/*
 * signals.c - sigaction()/signal() interposition (libc's and the raw
 * system call's) for the signals memtap owns, the program's handlers of
 * asynchronous signals called through memtap under the fault engine, and
 * delivery of the signals that are not memtap's to the program.
 */
#define _GNU_SOURCE
#include "signals.h"
#include "process_end.h"
#include "preload/core/own_signals.h"
#include "preload/signal/sigtable.h"
#include "sys/own_flags.h"
#include "sys/sigbits.h"

#include "preload/core/defer.h"
#include "preload/core/wait_call.h"
#include "preload/fault/fault.h"
#include "preload/core/own_text.h"
#include "preload/record/tracer.h"
#include "rt/rewritten.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <ucontext.h>
#include <sys/syscall.h>

extern int __sigaction(int, const struct sigaction *, struct sigaction *);

#define KERNEL_SA_RESTORER 0x04000000 /* the kernel's SA_RESTORER */

/* rt_sigaction's own argument. */
typedef struct kernel_action {
    void *handler;
    unsigned long flags;
    void *restorer;
    unsigned long mask;
} kernel_action;

static struct sigaction from_kernel(const kernel_action *k)
{
    struct sigaction a;
    memset(&a, 0, sizeof a);
    a.sa_handler = (sighandler_t)k->handler;
    a.sa_flags = (int)k->flags;
    a.sa_restorer = (void (*)(void))k->restorer;
    a.sa_mask.__val[0] = k->mask;
    return a;
}

static kernel_action to_kernel(const struct sigaction *a)
{
    return (kernel_action){ (void *)a->sa_handler, (unsigned long)a->sa_flags,
                            (void *)a->sa_restorer, a->sa_mask.__val[0] };
}

/* sigaction made by memtap itself, never trapped by its own filter (which
 * lets libmemtap.so's system calls through): with memtap's restorer, the
 * instruction sequence unwinders and debuggers recognize as a signal
 * return. */
void memtap_restore_rt(void);
__asm__(".text\n"
        ".align 16\n"
        ".type memtap_restore_rt, @function\n"
        "memtap_restore_rt:\n"
        "\tmovq $15, %rax\n" /* rt_sigreturn */
        "\tsyscall\n"
        ".size memtap_restore_rt, .-memtap_restore_rt\n");

static int kernel_sigaction(int sig, const struct sigaction *act,
                            struct sigaction *old)
{
    kernel_action k, had;
    if (act) {
        k = to_kernel(act);
        k.flags |= KERNEL_SA_RESTORER;
        k.restorer = (void *)memtap_restore_rt;
    }
    long rc = raw_syscall6(SYS_rt_sigaction, sig, act ? (long)&k : 0,
                           old ? (long)&had : 0, 8, 0, 0);
    if (rc == 0 && old)
        *old = from_kernel(&had);
    return rc == 0 ? 0 : -1;
}

/* ---- asynchronous signals: the program's handlers, called by memtap ----
 *
 * With the fault engine on, a handler's traced accesses cost a fault each:
 * a timer signal whose handler takes longer than its period would leave the
 * code it interrupts no time at all.  So memtap calls the program's handlers
 * of standard asynchronous signals itself, and when a handler that paid for
 * traced accesses is due again before the interrupted code has run a single
 * instruction, that delivery is merged into the next one (as the kernel
 * merges a standard signal that is already pending), at most twice in a
 * row.  Merged deliveries are counted (signals_merged in the trace). */

static unsigned char wrapped_now[_NSIG]; /* on_async is the kernel's handler */
static _Atomic uint64_t merged;

typedef struct async_state {
    uint64_t rip, rsp;   /* where the last handler run interrupted */
    uint64_t traps;      /* the thread's traps when that run ended */
    int paid;            /* the run took faults or system calls */
    int skips;           /* deliveries merged since it ran */
} async_state;
#define STANDARD_SIGNALS 32 /* 1..31; real-time signals queue, never merge */
static __thread async_state tls_async[STANDARD_SIGNALS]
    __attribute__((tls_model("initial-exec")));

static int wrappable(int sig)
{
    return (fault_enabled() || rewritten_modules() > 0) && sig > 0 &&
           sig < STANDARD_SIGNALS && !own_signals_has(sig) && sig != SIGKILL &&
           sig != SIGSTOP && sig != SIGSEGV &&
           sig != SIGBUS && sig != SIGILL && sig != SIGFPE &&
           sig != SIGTRAP && sig != SIGSYS;
}

/* No progress: the interrupted code is where the last run of a paying
 * handler left it, and has not trapped since (the fault engine's: under
 * the static engine a handler costs no traps). */
static int starved(const async_state *st, const ucontext_t *uc)
{
    return fault_enabled() && st->paid && st->skips < 2 &&
           st->rip == (uint64_t)uc->uc_mcontext.gregs[REG_RIP] &&
           st->rsp == (uint64_t)uc->uc_mcontext.gregs[REG_RSP] &&
           st->traps == fault_thread_traps();
}

static void on_async(int sig, siginfo_t *si, void *ucv)
{
    own_flags();
    if (wait_call_interrupt(sig, si, ucv, sigtable_action(sig)->sa_flags) ||
        defer_signal(sig, si, ucv) ||
        (rewritten_flush_coming(ucv) && defer_until_section(sig, si, ucv)))
        return;
    ucontext_t *uc = ucv;
    async_state *st = &tls_async[sig];
    if (starved(st, uc)) {
        st->skips++;
        atomic_fetch_add(&merged, 1);
        return;
    }
    st->skips = 0;
    st->rip = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
    st->rsp = (uint64_t)uc->uc_mcontext.gregs[REG_RSP];
    uint64_t before = fault_thread_traps();
    /* memtap's work here is not the program's: what the rewritten C
     * library logs for it is dropped (the program's handler logs again,
     * rewritten_handler_enter) */
    rewritten_own_begin();
    sigtable_chain(sig, si, uc);
    rewritten_own_end();
    st->traps = fault_thread_traps();
    st->paid = st->traps != before;
}

uint64_t signals_wrapped(void)
{
    uint64_t bits = 0;
    for (int sig = 1; sig < STANDARD_SIGNALS; sig++)
        if (wrapped_now[sig])
            bits |= 1ull << (sig - 1);
    return bits;
}

/* Whether a is one of memtap's own handlers (the fatal signals': they
 * stand for SIG_DFL, as the program sees them). */
static int memtaps_handler(const struct sigaction *a)
{
    unsigned long lo, hi, at = (unsigned long)a->sa_handler;
    own_text_range(&lo, &hi);
    return sigtable_runs_handler(a) && at >= lo && at < hi;
}

static void stands_for_default(struct sigaction *a)
{
    memset(a, 0, sizeof *a);
    a->sa_handler = SIG_DFL;
}

/* Sets the program's action for a wrappable signal: recorded, and the
 * kernel's action is on_async when it has a handler. */
static int set_wrapped(int sig, const struct sigaction *act,
                       struct sigaction *old)
{
    struct sigaction had;
    if (!wrapped_now[sig] && kernel_sigaction(sig, NULL, &had) != 0)
        return -1;
    if (wrapped_now[sig])
        had = *sigtable_action(sig);
    else if (memtaps_handler(&had))
        stands_for_default(&had);
    if (act) {
        struct sigaction k = *act;
        own_signals_strip(&k.sa_mask);
        if (sigtable_runs_handler(act)) {
            k.sa_sigaction = on_async;
            k.sa_flags |= SA_SIGINFO;
        } else if (act->sa_handler == SIG_DFL) {
            process_fatal_action(sig, &k); /* it stands for SIG_DFL */
        }
        if (kernel_sigaction(sig, &k, NULL) != 0)
            return -1;
        *sigtable_action(sig) = *act;
        wrapped_now[sig] = (unsigned char)sigtable_runs_handler(act);
        sigtable_note(sig, sigtable_runs_handler(act));
    }
    if (old)
        *old = had;
    return 0;
}

void signals_wrap_existing(void)
{
    for (int sig = 1; sig < _NSIG; sig++) {
        struct sigaction a;
        if (own_signals_has(sig) || kernel_sigaction(sig, NULL, &a) != 0)
            continue;
        int handler = sigtable_runs_handler(&a) && !memtaps_handler(&a);
        sigtable_note(sig, handler);
        if (wrappable(sig) && handler)
            set_wrapped(sig, &a, NULL);
    }
}

uint64_t signals_merged(void) { return atomic_load(&merged); }

/* sigaction in a child that shares its parent's memory (vfork: posix_spawn's
 * child, CPython's subprocess child, which sets each handled signal back
 * to SIG_DFL before its exec): memtap's table of the program's actions is
 * the parent's, and stays so (the child's SIG_DFL went into it, and the
 * parent's next SIGINT ended the parent: the action read SIG_DFL).  The
 * child's own kernel action is set as asked, unwrapped; memtap's own
 * signals stay memtap's (its handlers run the child's exec). */
static int child_sigaction(int sig, const struct sigaction *act,
                           struct sigaction *old)
{
    struct sigaction had;
    if (wrapped_now[sig] || own_signals_has(sig))
        had = *sigtable_action(sig);
    else if (kernel_sigaction(sig, NULL, &had) != 0)
        return -1;
    else if (memtaps_handler(&had))
        stands_for_default(&had);
    if (act && !own_signals_has(sig)) {
        struct sigaction k = *act;
        own_signals_strip(&k.sa_mask);
        if (__sigaction(sig, &k, NULL) != 0)
            return -1;
    }
    if (old)
        *old = had;
    return 0;
}

MEMTAP_EXPORT int sigaction(int sig, const struct sigaction *act,
                            struct sigaction *old)
{
    if (sig > 0 && sig < _NSIG && !tracer_owns_process())
        return child_sigaction(sig, act, old);
    if (wrappable(sig))
        return set_wrapped(sig, act, old);
    if (!own_signals_has(sig)) {
        struct sigaction copy;
        const struct sigaction *given = act;
        if (act && !sigtable_runs_handler(act) && act->sa_handler == SIG_DFL &&
            process_fatal_action(sig, &copy)) {
            act = &copy; /* memtap's handler stands for SIG_DFL */
        } else if (act) {
            copy = *act;
            if (own_signals_strip(&copy.sa_mask))
                act = &copy;
        }
        int rc = __sigaction(sig, act, old);
        if (rc == 0 && given)
            sigtable_note(sig, sigtable_runs_handler(given));
        if (rc == 0 && old && memtaps_handler(old))
            stands_for_default(old);
        return rc;
    }
    if (old)
        *old = *sigtable_action(sig);
    if (act) {
        *sigtable_action(sig) = *act;
        sigtable_note(sig, sigtable_runs_handler(act));
    }
    return 0;
}

static sighandler_t set_handler(int sig, sighandler_t handler, int flags)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sa.sa_flags = flags;
    sigemptyset(&sa.sa_mask);
    if (sigaction(sig, &sa, &old) != 0)
        return SIG_ERR;
    return old.sa_handler;
}

MEMTAP_EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
    return set_handler(sig, handler, SA_RESTART);
}

MEMTAP_EXPORT sighandler_t bsd_signal(int sig, sighandler_t handler)
{
    return set_handler(sig, handler, SA_RESTART);
}

MEMTAP_EXPORT sighandler_t sysv_signal(int sig, sighandler_t handler)
{
    return set_handler(sig, handler, SA_RESETHAND | SA_NODEFER);
}

long signals_raw_action(int sig, const void *act, void *old, int shared)
{
    kernel_action now, had;
    if (act)
        now = *(const kernel_action *)act;
    if (!own_signals_has(sig) && !(wrappable(sig) && !shared)) {
        if (act) {
            sigset_t m;
            sigemptyset(&m);
            m.__val[0] = now.mask;
            own_signals_strip(&m);
            now.mask = m.__val[0];
        }
        long rc = raw_syscall6(SYS_rt_sigaction, sig, act ? (long)&now : 0,
                               old ? (long)&had : 0, 8, 0, 0);
        if (rc == 0 && old)
            *(kernel_action *)old = had;
        if (rc == 0 && act) {
            struct sigaction a = from_kernel(&now);
            sigtable_note(sig, sigtable_runs_handler(&a));
        }
        return rc;
    }
    if (!own_signals_has(sig)) { /* a wrappable signal, in the process that owns it */
        struct sigaction a = act ? from_kernel(&now) : (struct sigaction){ 0 };
        struct sigaction b;
        if (set_wrapped(sig, act ? &a : NULL, &b) != 0)
            return -EINVAL;
        if (old)
            *(kernel_action *)old = to_kernel(&b);
        return 0;
    }
    had = to_kernel(sigtable_action(sig));
    if (act && !shared) {
        *sigtable_action(sig) = from_kernel(&now);
        sigtable_note(sig, sigtable_runs_handler(sigtable_action(sig)));
    }
    if (old)
        *(kernel_action *)old = had;
    return 0;
}
