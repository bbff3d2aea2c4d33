/*
 * sigtable.c - the program's own signal dispositions and the delivery of
 * signals memtap does not consume (sigtable.h).
 */
#define _GNU_SOURCE
#include "sigtable.h"
#include "preload/core/own_signals.h"
#include "process_death.h"
#include "sys/rawsys.h"
#include "sys/sigbits.h"

#include <stdatomic.h>
#include <string.h>

static struct sigaction program_action[_NSIG];

/* Bit sig - 1: the program's action for sig runs code of its own (a
 * handler); for the others it stops, ends or does nothing. */
static _Atomic uint64_t program_handlers;

/* [1]: the outer layer's bracket, [0]: the inner's. */
static const sigtable_bracket *brackets[2];

struct sigaction *sigtable_action(int sig) { return &program_action[sig]; }

int sigtable_runs_handler(const struct sigaction *a)
{
    return (a->sa_flags & SA_SIGINFO) ||
           (a->sa_handler != SIG_DFL && a->sa_handler != SIG_IGN);
}

void sigtable_note(int sig, int handler)
{
    if (sig <= 0 || sig > 64)
        return;
    uint64_t bit = 1ull << (sig - 1);
    if (handler)
        atomic_fetch_or(&program_handlers, bit);
    else
        atomic_fetch_and(&program_handlers, ~bit);
}

uint64_t sigtable_handlers(void) { return atomic_load(&program_handlers); }

void sigtable_adopt(int sig, const struct sigaction *had)
{
    if (sig > 0 && sig < _NSIG) {
        program_action[sig] = *had;
        sigtable_note(sig, sigtable_runs_handler(had));
    }
}

void sigtable_set_bracket(int outer, const sigtable_bracket *b)
{
    brackets[outer != 0] = b;
}

/* Calls the program's handler as the kernel would have: with the mask the
 * interrupted code had plus the handler's own (and the signal unless
 * SA_NODEFER), memtap's synchronous signals left deliverable, and outside
 * memtap's brackets. */
static void call_program_handler(const struct sigaction *a, int sig,
                                 siginfo_t *si, void *uc)
{
    _Alignas(16) unsigned char state[2][SIGTABLE_BRACKET_STATE];
    for (int i = 1; i >= 0; i--) /* the outer one may give uc the program's mask back */
        if (brackets[i])
            brackets[i]->suspend(state[i], uc);
    sigset_t mask = ((ucontext_t *)uc)->uc_sigmask, ours;
    sigbits_or(&mask, &a->sa_mask);
    if (!(a->sa_flags & SA_NODEFER))
        sigbits_add(&mask, sig);
    own_signals_strip(&mask);
    raw_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&mask, (long)&ours,
                 8, 0, 0);
    if (a->sa_flags & SA_SIGINFO)
        a->sa_sigaction(sig, si, uc);
    else
        a->sa_handler(sig);
    raw_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&ours, 0, 8, 0, 0);
    for (int i = 0; i < 2; i++)
        if (brackets[i])
            brackets[i]->resume(state[i]);
}

void sigtable_chain(int sig, siginfo_t *si, void *uc)
{
    struct sigaction *a = &program_action[sig];
    if (sigtable_runs_handler(a)) {
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
    process_die_by_signal(sig, si, uc);
}
