/*
 * signals.c - sigaction()/signal() interposition for the signals memtap
 * owns, and delivery of the ones that are not memtap's to the program.
 */
#define _GNU_SOURCE
#include "signals.h"

#include "fault.h"
#include "rewritten.h"
#include "syscalls.h"
#include "tracer.h"
#include "world.h"

#include <errno.h>
#include <string.h>

extern int __sigaction(int, const struct sigaction *, struct sigaction *);

static struct sigaction program_action[_NSIG];

static int owned(int sig)
{
    return sig > 0 && sig < _NSIG &&
           (fault_owns_signal(sig) || syscalls_own_signal(sig) ||
            world_owns_signal(sig) || rewritten_owns_signal(sig));
}

MEMTAP_EXPORT int sigaction(int sig, const struct sigaction *act,
                            struct sigaction *old)
{
    if (!owned(sig)) {
        /* int3 sites must never run with SIGTRAP blocked: the kernel
         * would kill the program instead of calling memtap */
        if (act && rewritten_owns_signal(SIGTRAP) &&
            sigismember(&act->sa_mask, SIGTRAP)) {
            struct sigaction copy = *act;
            sigdelset(&copy.sa_mask, SIGTRAP);
            return __sigaction(sig, &copy, old);
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

void signals_adopt(int sig, const struct sigaction *had)
{
    if (sig > 0 && sig < _NSIG)
        program_action[sig] = *had;
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
        if (call.sa_flags & SA_SIGINFO)
            call.sa_sigaction(sig, si, uc);
        else
            call.sa_handler(sig);
        return;
    }
    if (a->sa_handler == SIG_IGN && si->si_code <= 0)
        return; /* an ignored signal sent by kill */
    process_die_by_signal(sig, si);
}
