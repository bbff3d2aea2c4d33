/*
 * sys/sigbits.h - signal sets as the kernel sees them (the first 64 bits
 * of a sigset_t), without the C library: memtap's signal handlers run
 * where the C library's functions are the program's (a rewritten libc
 * logs their accesses into the program's buffer, a program may define
 * its own), so they must call none of them.
 */
#ifndef MEMTAP_SYS_SIGBITS_H
#define MEMTAP_SYS_SIGBITS_H

#include <signal.h>
#include <stdint.h>

#define SIGBITS_BIT(sig) (1ull << ((unsigned)(sig) - 1))

static inline int sigbits_has(const sigset_t *s, int sig)
{
    return (s->__val[0] & SIGBITS_BIT(sig)) != 0;
}

static inline void sigbits_add(sigset_t *s, int sig)
{
    s->__val[0] |= SIGBITS_BIT(sig);
}

static inline void sigbits_del(sigset_t *s, int sig)
{
    s->__val[0] &= ~SIGBITS_BIT(sig);
}

/* Every signal, or none (the words past the kernel's cleared). */
static inline void sigbits_set_all(sigset_t *s, int all)
{
    for (unsigned i = 0; i < sizeof s->__val / sizeof *s->__val; i++)
        s->__val[i] = 0;
    s->__val[0] = all ? ~0ull : 0;
}

/* Every signal but the synchronous ones (SIGSEGV, SIGBUS, SIGTRAP, SIGSYS,
 * SIGFPE, SIGILL): what memtap's handlers, and an open window, hold off.
 * The synchronous ones must stay deliverable: blocked, the kernel would
 * kill the process on the next fault. */
static inline void sigbits_async(sigset_t *s)
{
    sigbits_set_all(s, 1);
    sigbits_del(s, SIGSEGV);
    sigbits_del(s, SIGBUS);
    sigbits_del(s, SIGTRAP);
    sigbits_del(s, SIGSYS);
    sigbits_del(s, SIGFPE);
    sigbits_del(s, SIGILL);
}

static inline void sigbits_or(sigset_t *to, const sigset_t *from)
{
    to->__val[0] |= from->__val[0];
}

#endif
