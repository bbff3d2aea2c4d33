/*
 * own_signals.c - the set of signals memtap's engines have claimed: one
 * word, set once per signal and only read after (own_signals.h).
 */
#include "own_signals.h"
#include "sys/sigbits.h"

#include <stdatomic.h>

static _Atomic uint64_t claimed;

void own_signals_claim(int sig)
{
    if (sig > 0 && sig <= 64)
        atomic_fetch_or(&claimed, SIGBITS_BIT(sig));
}

int own_signals_has(int sig)
{
    return sig > 0 && sig <= 64 && (atomic_load(&claimed) & SIGBITS_BIT(sig)) != 0;
}

int own_signals_strip(sigset_t *m)
{
    static const int sync[] = { SIGSEGV, SIGTRAP, SIGSYS };
    int changed = 0;
    for (size_t i = 0; i < sizeof sync / sizeof *sync; i++)
        if (own_signals_has(sync[i]) && sigbits_has(m, sync[i])) {
            sigbits_del(m, sync[i]);
            changed = 1;
        }
    return changed;
}
