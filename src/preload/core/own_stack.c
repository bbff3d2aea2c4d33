/*
 * own_stack.c - the alternate signal stack memtap gives each thread
 * (own_stack.h): memory of memtap's own, made and removed by raw system
 * calls.
 */
#define _GNU_SOURCE
#include "own_stack.h"
#include "sys/rawsys.h"

#include <signal.h>
#include <stddef.h>

/* A thread memtap did not see start (raw clone, or code of the thread
 * library's that runs before the start routine) gets its stack when
 * memtap's code first needs one (own_stack_for).  After its removal at
 * the thread's end, none is made again. */
#define ALTSTACK_SIZE (64u * 1024)
static __thread void *tls_altstack __attribute__((tls_model("initial-exec")));
static __thread int tls_altstack_removed __attribute__((tls_model("initial-exec")));

void own_stack_install(void)
{
    if (tls_altstack || tls_altstack_removed)
        return;
    void *mem = raw_map(ALTSTACK_SIZE);
    stack_t ss = { .ss_sp = mem, .ss_size = ALTSTACK_SIZE };
    if (mem && raw_syscall3(SYS_sigaltstack, (long)&ss, 0, 0) == 0)
        tls_altstack = mem;
    else if (mem)
        raw_unmap(mem, ALTSTACK_SIZE);
}

void own_stack_remove(void)
{
    stack_t off = { .ss_flags = SS_DISABLE };
    tls_altstack_removed = 1;
    /* not while a handler runs on it (pthread_exit from a handler) */
    if (tls_altstack && raw_syscall3(SYS_sigaltstack, (long)&off, 0, 0) == 0) {
        raw_unmap(tls_altstack, ALTSTACK_SIZE);
        tls_altstack = NULL;
    }
}

uintptr_t own_stack_for(uintptr_t sp)
{
    if (!tls_altstack)
        own_stack_install();
    uintptr_t lo = (uintptr_t)tls_altstack, hi = lo + ALTSTACK_SIZE;
    if (!lo || (sp >= lo && sp < hi))
        return sp & ~(uintptr_t)15;
    return hi;
}
