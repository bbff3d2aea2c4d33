/*
 * hidden_task.c - starts a process of memtap's own inside the traced
 * program's memory (the writer) with a bare clone(2).
 *
 * The new task gets a stack and a thread pointer of its own, both mapped
 * straight from the kernel.  Below the thread pointer lies a zeroed copy
 * of the static TLS area's extent (the size the loaded modules' TLS blocks
 * take there), so that memtap's initial-exec thread-locals (the own-code
 * flag the interposed memcpy reads, for one) are the task's own; above
 * it a TCB with the fields compiled code reads: the self pointers and the
 * stack and pointer guards, copied from the creating thread.
 *
 * Under memtap run it is nobody's child in the program: a go-between clone
 * starts it and ends at once, so that it is an orphan, which the run's
 * subreaper (memtap run) takes in.  A program that waits with __WALL until
 * it has no child left (strace -f) waited for it forever when it was the
 * program's child.  The program learns of its end from a word the kernel
 * clears then (CLONE_CHILD_CLEARTID), it of the program's from a pidfd.
 */
#define _GNU_SOURCE
#include "hidden_task.h"
#include "sys/page.h"

#include "own_text.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <link.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define STACK_SIZE (256u << 10)
#define TCB_SIZE 4096u          /* glibc's struct pthread is ~2.3 KiB */
#define GO_BETWEEN_STACK 8192u  /* the go-between's, below the writer's */

static uintptr_t tls_extent;    /* bytes below the thread pointer in use */
static __thread int tls_hidden __attribute__((tls_model("initial-exec")));

typedef struct start {
    void (*fn)(void *);
    void *arg;
    uintptr_t *sp;              /* the hidden process's first stack */
    uintptr_t tp;               /* and thread pointer */
    _Atomic uint32_t *running;  /* cleared by the kernel at its end */
    const char *name;           /* its name (ps) */
    long pid;                   /* the go-between's answer */
} start;

int hidden_task_current(void) { return tls_hidden; }

/* The new thread's first function. */
static void hidden_entry(void *p)
{
    start *s = p;
    tls_hidden = 1;
    s->fn(s->arg);
}

static uintptr_t thread_pointer(void)
{
    uintptr_t tp;
    __asm__("mov %%fs:0, %0" : "=r"(tp));
    return tp;
}

static int measure_tls(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    uintptr_t tp = *(uintptr_t *)data;
    uintptr_t block = (uintptr_t)info->dlpi_tls_data;
    if (block && block < tp && tp - block > tls_extent) {
        for (int i = 0; i < info->dlpi_phnum; i++)
            if (info->dlpi_phdr[i].p_type == PT_TLS)
                tls_extent = tp - block;
    }
    return 0;
}

int hidden_task_prepare(void)
{
    uintptr_t tp = thread_pointer();
    tls_extent = 0;
    dl_iterate_phdr(measure_tls, &tp);
    if (tls_extent == 0 || tls_extent > (16u << 20))
        return -1;
    tls_extent = (tls_extent + 64 + PAGE - 1) & ~(uintptr_t)(PAGE - 1);
    return 0;
}

int hidden_task_cpus(void)
{
    unsigned long mask[16] = { 0 };
    long n = raw_syscall3(SYS_sched_getaffinity, 0, sizeof mask, mask);
    if (n <= 0)
        return 1;
    int cpus = 0;
    for (long i = 0; i < n / (long)sizeof *mask; i++)
        cpus += __builtin_popcountl(mask[i]);
    return cpus > 0 ? cpus : 1;
}

/* clone(2) whose child pops fn and arg off its new stack, calls fn and
 * ends (exit(2)) when fn returns. */
static long clone_calling(unsigned long flags, uintptr_t *sp, uintptr_t tp,
                          _Atomic uint32_t *child_tid)
{
    long ret;
    register long r10 __asm__("r10") = (long)child_tid;
    register long r8 __asm__("r8") = (long)tp;
    __asm__ volatile("syscall\n\t"
                     "test %%rax, %%rax\n\t"
                     "jnz 1f\n\t"
                     "xor %%ebp, %%ebp\n\t"
                     "pop %%rax\n\t"
                     "pop %%rdi\n\t"
                     "call *%%rax\n\t"
                     "mov $60, %%eax\n\t" /* SYS_exit */
                     "xor %%edi, %%edi\n\t"
                     "syscall\n\t"
                     "hlt\n"
                     "1:"
                     : "=a"(ret)
                     : "a"(SYS_clone), "D"(flags), "S"(sp), "d"(0),
                       "r"(r10), "r"(r8)
                     : "rcx", "r11", "memory");
    return ret;
}

/* The go-between (see the top): starts the hidden process, an orphan
 * once the go-between ends, and leaves its pid (or a negative errno) in
 * s->pid.  It runs on its creator's thread pointer: it touches no
 * thread-local. */
static void go_between(void *p)
{
    start *s = p;
    /* the memory and the descriptors shared, nothing else: no thread of
     * the program's process, and the low byte of the flags (the signal
     * its end sends the parent) 0; its own copy of the signal actions and
     * of the working directory (a shared one would refuse the program
     * setns(2) into a user namespace) */
    long pid = clone_calling(CLONE_VM | CLONE_FILES | CLONE_SETTLS | CLONE_CHILD_CLEARTID,
                             s->sp, s->tp, s->running);
    __atomic_store_n(&s->pid, pid, __ATOMIC_RELEASE);
}

/* The go-between as a process of its own: named first, so that the hidden
 * process is born with its name (a program's name would show until it
 * named itself, to memtap run among them its subreaper took in). */
static void go_between_named(void *p)
{
    start *s = p;
    raw_syscall6(SYS_prctl, PR_SET_NAME, (long)s->name, 0, 0, 0, 0);
    go_between(s);
}

long hidden_process_start(void (*fn)(void *), void *arg, const char *name,
                          int orphan, hidden_process *p)
{
    p->pid = 0;
    if (tls_extent == 0)
        return -EINVAL;
    size_t size = GO_BETWEEN_STACK + STACK_SIZE + tls_extent + TCB_SIZE;
    long m = raw_syscall6(SYS_mmap, 0, (long)size, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1,
                          0);
    if (RAW_FAILED(m))
        return m;
    char *base = (char *)m, *stack = base + GO_BETWEEN_STACK;
    uintptr_t *tcb = (uintptr_t *)(void *)(stack + STACK_SIZE + tls_extent);
    uintptr_t tp = (uintptr_t)tcb;
    tcb[0] = tp;                /* tcbhead_t.tcb */
    tcb[2] = tp;                /* tcbhead_t.self */
    __asm__("mov %%fs:0x28, %0" : "=r"(tcb[5]));  /* stack_guard */
    __asm__("mov %%fs:0x30, %0" : "=r"(tcb[6]));  /* pointer_guard */
    /* each stack ends 16-byte aligned after fn and arg are popped */
    start *s = (start *)(void *)(stack + STACK_SIZE - 64);
    uintptr_t *sp = (uintptr_t *)(void *)s - 2;
    sp[0] = (uintptr_t)hidden_entry;
    sp[1] = (uintptr_t)s;
    uintptr_t *go_sp = (uintptr_t *)(void *)stack - 2;
    go_sp[0] = (uintptr_t)go_between_named;
    go_sp[1] = (uintptr_t)s;
    *s = (start){ fn, arg, sp, tp, &p->running, name, -EAGAIN };
    atomic_store(&p->running, 1);

    /* the new process starts with every signal blocked but SIGTRAP: the
     * int3 of a hot site being patched (fault engine) may be met by its
     * library calls, and a blocked SIGTRAP would kill */
    sigset_t all, old;
    sigfillset(&all);
    sigdelset(&all, SIGTRAP);
    raw_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&all, (long)&old, 8,
                 0, 0);
    /* a subreaper takes an orphan in, and sees it (its end signal SIGCHLD
     * then) in its plain waits: the process's child then, which only
     * __WALL waits see (the low byte of the flags 0) */
    int reaper = 0;
    p->child = !orphan ||
               (raw_syscall3(SYS_prctl, PR_GET_CHILD_SUBREAPER, (long)&reaper, 0) == 0 &&
                reaper);
    if (p->child) {
        go_between(s);
    } else {
        long go = clone_calling(CLONE_VM | CLONE_FILES, go_sp, 0, NULL);
        if (go < 0)
            s->pid = go;
        siginfo_t si; /* (-ECHILD: a wait of the program's took it) */
        while (go > 0 && raw_syscall6(SYS_waitid, P_PID, go, (long)&si,
                                      WEXITED | __WCLONE, 0, 0) == -EINTR)
            ;
    }
    raw_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&old, 0, 8, 0, 0);
    long pid = __atomic_load_n(&s->pid, __ATOMIC_ACQUIRE);
    if (pid < 0) {
        atomic_store(&p->running, 0);
        raw_syscall3(SYS_munmap, m, (long)size, 0);
        return pid;
    }
    p->pid = pid;
    p->base = base;
    p->size = size;
    return pid;
}

int hidden_process_reap(hidden_process *p)
{
    if (p->pid <= 0)
        return -ECHILD;
    /* (the kernel's wake at a task's end is a shared futex's) */
    for (uint32_t r; (r = atomic_load(&p->running)) != 0;)
        raw_syscall6(SYS_futex, (long)&p->running, FUTEX_WAIT, r, 0, 0, 0);
    siginfo_t si;
    while (p->child && raw_syscall6(SYS_waitid, P_PID, p->pid, (long)&si,
                                    WEXITED | __WCLONE, 0, 0) == -EINTR)
        ;
    hidden_process_forget(p);
    return 0;
}

void hidden_process_forget(hidden_process *p)
{
    if (p->pid > 0)
        raw_syscall3(SYS_munmap, (long)p->base, (long)p->size, 0);
    p->pid = 0;
    atomic_store(&p->running, 0);
}

int hidden_task_watch(int at, int min)
{
    long fd = raw_syscall3(SYS_pidfd_open, raw_syscall3(SYS_getpid, 0, 0, 0), 0, 0);
    if (fd < 0)
        return (int)fd;
    long high = at >= 0 ? raw_syscall3(SYS_dup3, fd, at, O_CLOEXEC)
                        : raw_syscall3(SYS_fcntl, fd, F_DUPFD_CLOEXEC, min);
    raw_syscall3(SYS_close, fd, 0, 0);
    return (int)high;
}

int hidden_task_watched_ended(int watch, long pid)
{
    struct pollfd p = { watch, POLLIN, 0 };
    long n = raw_syscall3(SYS_poll, (long)&p, 1, 0);
    if (n == 0 || (n == 1 && !(p.revents & POLLNVAL)))
        return n == 1 && (p.revents & POLLIN);
    /* the descriptor is gone (a raw close of the program's): gone once
     * reaped */
    return raw_syscall3(SYS_kill, pid, 0, 0) == -ESRCH;
}
