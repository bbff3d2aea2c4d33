/*
 * process_death.c - the end of a process by a signal (process_death.h).
 */
#define _GNU_SOURCE
#include "process_death.h"
#include "preload/record/tracer.h"
#include "sys/rawsys.h"

#include <stdint.h>
#include <ucontext.h>

void process_die_by_signal(int sig, const siginfo_t *si, const void *uc)
{
    int fault = sig == SIGSEGV || sig == SIGBUS || sig == SIGILL ||
                sig == SIGTRAP || sig == SIGFPE;
    if (fault && si->si_code > 0 && uc)
        tracer_note_fault_pc((uint64_t)((const ucontext_t *)uc)
                                 ->uc_mcontext.gregs[REG_RIP]);
    tracer_finish("signal", sig);
    /* the kernel's own call: the C library's would be trapped, and this
     * may run inside the SIGSYS handler (a waiting call let it through) */
    struct { void *handler; unsigned long flags; void *restorer;
             unsigned long mask; } dfl = { SIG_DFL, 0, NULL, 0 };
    raw_syscall6(SYS_rt_sigaction, sig, (long)&dfl, 0, 8, 0, 0);
    /* a fault re-executes its instruction on return; any other signal is
     * sent again and delivered when this handler returns: one a process
     * sent, and the kernel's own (si_code SI_KERNEL: a terminal's ^C, an
     * alarm's SIGALRM), which was lost, the program running on */
    if (!fault || si->si_code <= 0 || sig == SIGTRAP)
        raw_syscall3(SYS_tgkill, raw_syscall3(SYS_getpid, 0, 0, 0),
                     raw_syscall3(SYS_gettid, 0, 0, 0), sig);
}
