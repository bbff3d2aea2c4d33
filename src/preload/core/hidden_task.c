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
 */
#define _GNU_SOURCE
#include "hidden_task.h"
#include "sys/page.h"

#include "own_text.h"

#include <errno.h>
#include <link.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define STACK_SIZE (256u << 10)
#define TCB_SIZE 4096u          /* glibc's struct pthread is ~2.3 KiB */

static uintptr_t tls_extent;    /* bytes below the thread pointer in use */
static __thread int tls_hidden __attribute__((tls_model("initial-exec")));

typedef struct start {
    void (*fn)(void *);
    void *arg;
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
static long clone_calling(unsigned long flags, uintptr_t *sp, uintptr_t tp)
{
    long ret;
    register long r10 __asm__("r10") = 0;  /* child_tid */
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

long hidden_process_start(void (*fn)(void *), void *arg, hidden_process *p)
{
    p->pid = 0;
    if (tls_extent == 0)
        return -EINVAL;
    size_t size = STACK_SIZE + tls_extent + TCB_SIZE;
    long m = raw_syscall6(SYS_mmap, 0, (long)size, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1,
                          0);
    if (RAW_FAILED(m))
        return m;
    char *base = (char *)m;
    uintptr_t *tcb = (uintptr_t *)(void *)(base + STACK_SIZE + tls_extent);
    uintptr_t tp = (uintptr_t)tcb;
    tcb[0] = tp;                /* tcbhead_t.tcb */
    tcb[2] = tp;                /* tcbhead_t.self */
    __asm__("mov %%fs:0x28, %0" : "=r"(tcb[5]));  /* stack_guard */
    __asm__("mov %%fs:0x30, %0" : "=r"(tcb[6]));  /* pointer_guard */
    /* the stack ends 16-byte aligned after fn and arg are popped */
    start *s = (start *)(void *)(base + STACK_SIZE - 64);
    s->fn = fn;
    s->arg = arg;
    uintptr_t *sp = (uintptr_t *)(void *)s - 2;
    sp[0] = (uintptr_t)hidden_entry;
    sp[1] = (uintptr_t)s;

    /* the new process starts with every signal blocked but SIGTRAP: the
     * int3 of a hot site being patched (fault engine) may be met by its
     * library calls, and a blocked SIGTRAP would kill */
    sigset_t all, old;
    sigfillset(&all);
    sigdelset(&all, SIGTRAP);
    raw_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&all, (long)&old, 8,
                 0, 0);
    /* the memory and the descriptors shared, nothing else: no thread of
     * the program's process, and the low byte of the flags (the signal
     * its end sends the parent) 0, which makes it a child that only a
     * wait with __WCLONE or __WALL sees (not the program's wait(2)); its
     * own copy of the signal actions and of the working directory (a
     * shared one would refuse the program setns(2) into a user
     * namespace) */
    long pid = clone_calling(CLONE_VM | CLONE_FILES | CLONE_SETTLS, sp, tp);
    raw_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&old, 0, 8, 0, 0);
    if (pid < 0) {
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
    siginfo_t si;
    long rc;
    do
        rc = raw_syscall6(SYS_waitid, P_PID, p->pid, (long)&si,
                          WEXITED | __WCLONE, 0, 0);
    while (rc == -EINTR);
    hidden_process_forget(p);
    return rc < 0 ? (int)rc : 0;
}

void hidden_process_forget(hidden_process *p)
{
    if (p->pid > 0)
        raw_syscall3(SYS_munmap, (long)p->base, (long)p->size, 0);
    p->pid = 0;
}
