/*
 * signals.c - sigaction()/signal() interposition for the signals memtap
 * owns, and delivery of the ones that are not memtap's to the program.
 */
#define _GNU_SOURCE
#include "signals.h"

#include "fault.h"
#include "rawsys.h"
#include "rewritten.h"
#include "syscalls.h"
#include "tracer.h"
#include "world.h"

#include <errno.h>
#include <string.h>
#include <ucontext.h>
#include <sys/syscall.h>

extern int __sigaction(int, const struct sigaction *, struct sigaction *);

static struct sigaction program_action[_NSIG];

static int owned(int sig)
{
    return sig > 0 && sig < _NSIG &&
           (fault_owns_signal(sig) || syscalls_own_signal(sig) ||
            world_owns_signal(sig) || rewritten_owns_signal(sig));
}

/* The synchronous signals memtap runs on must never be blocked: the kernel
 * kills a process whose fault or trap arrives blocked (a program handler
 * whose mask is full, as dash's are, would die on its first access). */
static int strip_owned(sigset_t *m)
{
    static const int sync[] = { SIGSEGV, SIGTRAP, SIGSYS };
    int changed = 0;
    for (size_t i = 0; i < sizeof sync / sizeof *sync; i++)
        if (owned(sync[i]) && sigismember(m, sync[i])) {
            sigdelset(m, sync[i]);
            changed = 1;
        }
    /* int3 sites of rewritten code rely on SIGTRAP alike */
    if (rewritten_owns_signal(SIGTRAP) && sigismember(m, SIGTRAP)) {
        sigdelset(m, SIGTRAP);
        changed = 1;
    }
    return changed;
}

MEMTAP_EXPORT int sigaction(int sig, const struct sigaction *act,
                            struct sigaction *old)
{
    if (!owned(sig)) {
        struct sigaction copy;
        if (act) {
            copy = *act;
            if (strip_owned(&copy.sa_mask))
                act = &copy;
        }
        return __sigaction(sig, act, old);
    }
    if (old)
        *old = program_action[sig];
    if (act)
        program_action[sig] = *act;
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

/* rt_sigaction's own argument. */
typedef struct kernel_action {
    void *handler;
    unsigned long flags;
    void *restorer;
    unsigned long mask;
} kernel_action;

long signals_raw_action(int sig, const void *act, void *old, int shared)
{
    kernel_action now, had;
    if (act)
        now = *(const kernel_action *)act;
    if (!owned(sig)) {
        if (act) {
            sigset_t m;
            sigemptyset(&m);
            m.__val[0] = now.mask;
            strip_owned(&m);
            now.mask = m.__val[0];
        }
        long rc = raw_syscall6(SYS_rt_sigaction, sig, act ? (long)&now : 0,
                               old ? (long)&had : 0, 8, 0, 0);
        if (rc == 0 && old)
            *(kernel_action *)old = had;
        return rc;
    }
    const struct sigaction *a = &program_action[sig];
    had = (kernel_action){ (void *)a->sa_handler, (unsigned long)a->sa_flags,
                           (void *)a->sa_restorer, a->sa_mask.__val[0] };
    if (act && !shared) {
        struct sigaction n;
        memset(&n, 0, sizeof n);
        n.sa_handler = (sighandler_t)now.handler;
        n.sa_flags = (int)now.flags;
        n.sa_restorer = (void (*)(void))now.restorer;
        n.sa_mask.__val[0] = now.mask;
        program_action[sig] = n;
    }
    if (old)
        *(kernel_action *)old = had;
    return 0;
}

void signals_adopt(int sig, const struct sigaction *had)
{
    if (sig > 0 && sig < _NSIG)
        program_action[sig] = *had;
}

/* Calls the program's handler as the kernel would have: with the mask the
 * interrupted code had plus the handler's own (and the signal unless
 * SA_NODEFER), memtap's synchronous signals left deliverable, and outside
 * memtap's bracket, so that a handler leaving by longjmp or exit leaves
 * the thread as the program expects. */
static void call_program_handler(const struct sigaction *a, int sig,
                                 siginfo_t *si, void *uc)
{
    sigset_t mask = ((ucontext_t *)uc)->uc_sigmask, ours;
    sigorset(&mask, &mask, &a->sa_mask);
    if (!(a->sa_flags & SA_NODEFER))
        sigaddset(&mask, sig);
    strip_owned(&mask);
    raw_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&mask, (long)&ours,
                 8, 0, 0);
    fault_bracket b;
    fault_bracket_suspend(&b);
    if (a->sa_flags & SA_SIGINFO)
        a->sa_sigaction(sig, si, uc);
    else
        a->sa_handler(sig);
    fault_bracket_resume(&b);
    raw_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&ours, 0, 8, 0, 0);
}

void signals_chain(int sig, siginfo_t *si, void *uc)
{
    struct sigaction *a = &program_action[sig];
    if ((a->sa_flags & SA_SIGINFO) || (a->sa_handler != SIG_DFL &&
                                       a->sa_handler != SIG_IGN)) {
        struct sigaction call = *a;
        if (a->sa_flags & SA_RESETHAND) {
            memset(a, 0, sizeof *a);
            a->sa_handler = SIG_DFL;
        }
        call_program_handler(&call, sig, si, uc);
        return;
    }
    if (a->sa_handler == SIG_IGN && si->si_code <= 0)
        return; /* an ignored signal sent by kill */
    process_die_by_signal(sig, si);
}
