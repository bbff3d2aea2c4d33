/*
 * wait_call.c - the interruptible system call of wait_call.h, with the
 * technique of musl's cancellation points: the call's syscall instruction
 * lies between two labels, behind a test of the thread's flag.  A signal
 * whose pc is between them (the call not begun, or rewound by the kernel
 * to restart it) moves the pc to a return of -EINTR; one before the test
 * sets the flag the test reads; one after the call leaves its result.
 * The signals taken are kept per thread (a standard signal is pending
 * once at most, so a few places do) for the SIGSYS handler to deliver;
 * past them one is queued again, blocked until that handler returns.
 */
#define _GNU_SOURCE
#include "wait_call.h"
#include "sys/rawsys.h"
#include "sys/sigbits.h"

#include <errno.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <ucontext.h>

#define KEPT 4

static __thread struct {
    int active;          /* in wait_call, its signals unblocked */
    volatile int caught; /* a signal came: the call is not to begin */
    int restart;         /* every one caught asks for SA_RESTART */
    uint64_t bits;       /* the signals caught */
    unsigned head, tail; /* kept[head % KEPT ..tail) to deliver */
    struct {
        int sig;
        siginfo_t si;
    } kept[KEPT];
} tls_wait __attribute__((tls_model("initial-exec")));

/* nr's call with the arguments a[0..5], unless *flag is set: then -EINTR.
 * (rdi nr, rsi a, rdx flag) */
long wait_syscall(long nr, const long *a, volatile int *flag);
extern const char wait_call_begin[], wait_call_end[], wait_call_cancelled[];
__asm__(".text\n"
        ".p2align 4\n"
        ".hidden wait_syscall\n"
        ".type wait_syscall, @function\n"
        "wait_syscall:\n\t"
        "mov %rdi, %rax\n\t"
        "mov %rdx, %rcx\n\t"
        "mov 0(%rsi), %rdi\n\t"
        "mov 16(%rsi), %rdx\n\t"
        "mov 24(%rsi), %r10\n\t"
        "mov 32(%rsi), %r8\n\t"
        "mov 40(%rsi), %r9\n\t"
        "mov 8(%rsi), %rsi\n"
        ".hidden wait_call_begin\n"
        "wait_call_begin:\n\t"
        "cmpl $0, (%rcx)\n\t"
        "jne wait_call_cancelled\n\t"
        "syscall\n"
        ".hidden wait_call_end\n"
        "wait_call_end:\n\t"
        "ret\n"
        ".hidden wait_call_cancelled\n"
        "wait_call_cancelled:\n\t"
        "mov $-4, %rax\n\t" /* -EINTR */
        "ret\n"
        ".size wait_syscall, .-wait_syscall\n");

long wait_call(long nr, const long *a, uint64_t catch, int *caught)
{
    *caught = 0;
    if (!catch)
        return raw_syscall6(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
    tls_wait.caught = 0;
    tls_wait.restart = 1;
    tls_wait.bits = 0;
    uint64_t saved;
    atomic_signal_fence(memory_order_seq_cst);
    tls_wait.active = 1;
    atomic_signal_fence(memory_order_seq_cst);
    raw_syscall6(SYS_rt_sigprocmask, SIG_UNBLOCK, (long)&catch, (long)&saved,
                 8, 0, 0);
    long ret = wait_syscall(nr, a, &tls_wait.caught);
    /* what came stays blocked until this handler returns to the program */
    uint64_t back = saved | tls_wait.bits;
    raw_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&back, 0, 8, 0, 0);
    atomic_signal_fence(memory_order_seq_cst);
    tls_wait.active = 0;
    atomic_signal_fence(memory_order_seq_cst);
    *caught = tls_wait.caught;
    if (ret == -EINTR && tls_wait.caught && tls_wait.restart)
        return WAIT_CALL_RESTART;
    return ret;
}

int wait_call_interrupt(int sig, const siginfo_t *si, void *ucv, int sa_flags)
{
    if (!tls_wait.active)
        return 0;
    ucontext_t *uc = ucv;
    uint64_t pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
    if (pc >= (uint64_t)(uintptr_t)wait_call_begin &&
        pc < (uint64_t)(uintptr_t)wait_call_end)
        uc->uc_mcontext.gregs[REG_RIP] = (greg_t)(uintptr_t)wait_call_cancelled;
    tls_wait.caught = 1;
    if (!(sa_flags & SA_RESTART))
        tls_wait.restart = 0;
    tls_wait.bits |= 1ull << (sig - 1);
    /* blocked once this handler returns, until the SIGSYS handler's end */
    sigbits_add(&uc->uc_sigmask, sig);
    if (tls_wait.tail - tls_wait.head < KEPT) {
        unsigned at = tls_wait.tail % KEPT;
        tls_wait.kept[at].sig = sig;
        tls_wait.kept[at].si = *si;
        tls_wait.tail++;
    } else { /* pending again, delivered after that handler's end */
        raw_syscall6(SYS_rt_tgsigqueueinfo, raw_syscall3(SYS_getpid, 0, 0, 0),
                     raw_syscall3(SYS_gettid, 0, 0, 0), sig, (long)si, 0, 0);
    }
    return 1;
}

int wait_call_take(int *sig, siginfo_t *si)
{
    if (tls_wait.head == tls_wait.tail)
        return 0;
    unsigned at = tls_wait.head++ % KEPT;
    *sig = tls_wait.kept[at].sig;
    *si = tls_wait.kept[at].si;
    return 1;
}
