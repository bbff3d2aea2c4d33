/*
 * process_end.c - every way out of the process flushes the trace first:
 * exit_group and _exit (process_exit), and the fatal signals whose
 * default action memtap's handler stands for (process_end.h).
 */
#define _GNU_SOURCE
#include "process_end.h"
#include "preload/core/defer.h"
#include "preload/fault/fault.h"
#include "preload/memmap/traced_set.h"
#include "preload/core/own_stack.h"
#include "preload/signal/process_death.h"
#include "rt/rewritten.h"
#include "sys/own_flags.h"
#include "sys/rawsys.h"
#include "sys/sigbits.h"
#include "preload/record/tracer.h"

#include <string.h>

extern int __sigaction(int, const struct sigaction *, struct sigaction *);

static const int fatal_signals[] = {
    SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGSYS, SIGTERM, SIGINT,
    SIGHUP, SIGQUIT, SIGPIPE, SIGALRM, SIGXCPU, SIGXFSZ, SIGUSR1, SIGUSR2,
};

static void on_fatal_signal(int sig, siginfo_t *si, void *uc)
{
    own_flags();
    if (defer_signal(sig, si, uc))
        return;
    fault_handler_enter();
    process_die_by_signal(sig, si, uc);
    fault_handler_leave();
}

static int fatal_installed;

int process_fatal_action(int sig, struct sigaction *sa)
{
    for (size_t i = 0; fatal_installed &&
                       i < sizeof fatal_signals / sizeof *fatal_signals; i++)
        if (fatal_signals[i] == sig) {
            memset(sa, 0, sizeof *sa);
            sa->sa_sigaction = on_fatal_signal;
            sa->sa_flags = SA_SIGINFO | SA_ONSTACK;
            /* flushing may touch traced memory: those faults must get in */
            sigbits_async(&sa->sa_mask);
            return 1;
        }
    return 0;
}

void process_end_install_fatal(void)
{
    own_stack_install();
    fatal_installed = 1;
    for (size_t i = 0; i < sizeof fatal_signals / sizeof *fatal_signals;
         i++) {
        struct sigaction old, sa;
        if (__sigaction(fatal_signals[i], NULL, &old) != 0 ||
            old.sa_handler != SIG_DFL || (old.sa_flags & SA_SIGINFO))
            continue; /* the program's own disposition stays */
        if (process_fatal_action(fatal_signals[i], &sa))
            __sigaction(fatal_signals[i], &sa, NULL);
    }
}

void process_end_trace(int status)
{
    if (tracer_owns_process()) { /* not a vfork child's, whose memory is
                                    its parent's */
        traced_set_active(0);
        rewritten_set_active(0);
    }
    tracer_finish("exit", status);
}

void process_exit(int status)
{
    process_end_trace(status);
    raw_syscall3(SYS_exit_group, status, 0, 0);
    __builtin_unreachable();
}

MEMTAP_EXPORT void _exit(int status) { process_exit(status); }

MEMTAP_EXPORT void _Exit(int status) __attribute__((alias("_exit")));
