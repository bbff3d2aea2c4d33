/*
 * syscalls.c - seccomp-trapped system calls, emulated with their buffers
 * open.
 *
 * The filter (syscall_filter.c) traps every system call made from the
 * traced modules except a few that take no user memory or must not be
 * emulated (clone, fork, sigreturn, exit).  For a trapped call, the table
 * below says which arguments point at user memory and how long that
 * memory is; those pages are opened, the call is made from here
 * (raw_syscall6 lives inside libmemtap.so, so the filter lets it
 * through), and the pages are closed.
 * A call the table does not know that still fails with EFAULT is retried
 * with all traced memory opened.  read/write-like calls on traced buffers
 * while other threads run go through memtap's buffers instead
 * (bounce.c), as do the calls the table sizes exactly (stat, open and
 * the like: its movable column).  They are recorded as block events (W: the kernel stored
 * into the buffer, G: it fetched from it).
 */
#define _GNU_SOURCE
#include "syscalls.h"
#include "process_end.h"
#include "preload/signal/sigtable.h"
#include "preload/core/own_signals.h"
#include "preload/core/stop_world.h"
#include "sys/sigbits.h"
#include "preload/modules/modules.h"

#include "execargs.h"
#include "preload/fault/fault.h"
#include "preload/memmap/traced_set.h"
#include "preload/fault/bounce.h"
#include "preload/fault/complete.h"
#include "preload/core/fmt.h"
#include "fdguard.h"
#include "preload/fault/futex.h"
#include "rt/rewritten.h"
#include "signals.h"
#include "syscall_filter.h"
#include "syscall_signals.h"
#include "syscall_table.h"
#include "preload/core/wait_call.h"
#include "sys/rawsys.h"
#include "preload/record/tracer.h"

#include <elf.h>
#include <linux/futex.h>
#include <errno.h>
#include <link.h>
#include <stdatomic.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <ucontext.h>

extern int __sigaction(int, const struct sigaction *, struct sigaction *);

static struct {
    int enabled;
    int all;                          /* syscalls_init's */
    uint64_t loader_text[2];          /* the loader's code: [start, end) */
    _Atomic unsigned long emulated;
    _Atomic unsigned long reopened;   /* calls retried with all pages open */
    _Atomic unsigned long code_made;  /* syscalls_note_code_made */
    _Atomic uint64_t code_made_first; /* the first one's call site */
    _Atomic unsigned long async_io_refused; /* io_uring_setup, io_setup */
} call_state;

unsigned long syscalls_emulated(void) { return call_state.emulated; }
int syscalls_enabled(void) { return call_state.enabled; }
unsigned long syscalls_reopened(void) { return call_state.reopened; }

typedef struct opened {
    traced_open_set sets[8];
    int n;
} opened;

static void open_buf(opened *o, uint64_t addr, uint64_t len)
{
    if (!addr || !len || o->n == 8 || !traced_has(addr, len))
        return;
    traced_open_set *s = &o->sets[o->n];
    traced_open(s, addr, len);
    o->n += s->n || s->overflow; /* (none: the program's own guard pages) */
}

static void open_iov(opened *o, const struct iovec *iov, long cnt)
{
    if (cnt < 0 || cnt > 1024)
        return;
    open_buf(o, (uint64_t)(uintptr_t)iov, (uint64_t)cnt * sizeof *iov);
    for (long i = 0; i < cnt; i++)
        open_buf(o, (uint64_t)(uintptr_t)iov[i].iov_base, iov[i].iov_len);
}

static void open_msg(opened *o, const struct msghdr *m)
{
    open_buf(o, (uint64_t)(uintptr_t)m, sizeof *m);
    if (!m)
        return;
    open_buf(o, (uint64_t)(uintptr_t)m->msg_name, m->msg_namelen);
    open_buf(o, (uint64_t)(uintptr_t)m->msg_control, m->msg_controllen);
    open_iov(o, m->msg_iov, (long)m->msg_iovlen);
}

static void open_args(opened *o, const sys_spec *sp, const long *a)
{
    for (int i = 0; i < 6; i++) {
        const arg_spec *x = &sp->args[i];
        uint64_t p = (uint64_t)a[i];
        switch (x->how) {
        case A_LEN:
        case A_RET:
        case A_FIXED:
        case A_NESTED:
        case A_ARRAY:
        case A_FDSET: open_buf(o, p, syscall_arg_bytes(x, a)); break;
        case A_STR: open_buf(o, p, 2 * 4096 - (p & 4095)); break;
        case A_IOV: open_iov(o, (const struct iovec *)(uintptr_t)p, a[x->n]); break;
        case A_MSG: open_msg(o, (const struct msghdr *)(uintptr_t)p); break;
        case A_MMSG: {
            const struct mmsghdr *v = (const struct mmsghdr *)(uintptr_t)p;
            long cnt = a[x->n];
            if (!v || cnt < 0 || cnt > 1024) /* UIO_MAXIOV */
                break;
            open_buf(o, p, (uint64_t)cnt * sizeof *v);
            for (long k = 0; k < cnt; k++)
                open_msg(o, &v[k].msg_hdr);
            break;
        }
        default: break;
        }
    }
}

static void close_all(opened *o)
{
    while (o->n > 0)
        traced_close(&o->sets[--o->n]);
}

/* The block events of `done` bytes moved through iov[0..cnt). */
static void record_iov(uint8_t kind, uint64_t pc, const struct iovec *iov,
                       long cnt, long done)
{
    for (long i = 0; iov && i < cnt && done > 0; i++) {
        long n = (long)iov[i].iov_len < done ? (long)iov[i].iov_len : done;
        if (n)
            tracer_record(kind, 0, pc, (uint64_t)(uintptr_t)iov[i].iov_base,
                          (uint64_t)n, 0, 0);
        done -= n;
    }
}

/* The block event of a read/write-like call that moved `done` bytes (or
 * messages, for the mmsg calls). */
static void record_block(const sys_spec *sp, const long *a, long done,
                         uint64_t pc)
{
    /* inside a block operation, the operation is the event */
    if (!sp || !sp->block || done <= 0 || fault_own_mode() ||
        !(traced_active() || rewritten_recording()))
        return;
    uint8_t kind = sp->block == 'W' ? MEMTAP_EV_BLOCK_STORE
                                    : MEMTAP_EV_BLOCK_FETCH;
    int buf_arg = sp->args[0].how ? 0 : 1, how = sp->args[buf_arg].how;
    const void *p = (const void *)(uintptr_t)a[buf_arg];
    if (how == A_IOV) {
        record_iov(kind, pc, p, a[2], done);
    } else if (how == A_MSG && p) {
        const struct msghdr *m = p;
        record_iov(kind, pc, m->msg_iov, (long)m->msg_iovlen, done);
    } else if (how == A_MMSG && p) { /* done: messages, each its msg_len */
        const struct mmsghdr *v = p;
        for (long k = 0; k < done; k++)
            record_iov(kind, pc, v[k].msg_hdr.msg_iov,
                       (long)v[k].msg_hdr.msg_iovlen, (long)v[k].msg_len);
    } else if (how != A_NONE && how != A_MSG && how != A_MMSG) {
        tracer_record(kind, 0, pc, (uint64_t)a[buf_arg], (uint64_t)done, 0, 0);
    }
}

/* Keeps the traced set current across the program's own memory calls. */
static void after_memory_call(long nr, const long *a, long ret)
{
    /* mremap: the pages keep their rights, and so their state (munmap and
     * mmap over traced pages are traced_unmap's) */
    if (nr == SYS_mremap && !RAW_FAILED(ret))
        traced_move((uintptr_t)a[0], (size_t)a[1], (uintptr_t)ret,
                   (size_t)a[2]);
}

void syscalls_note_code_made(long nr, const long *a, long ret, uint64_t pc)
{
    if (!call_state.enabled || call_state.all || !(a[2] & PROT_EXEC) ||
        (pc >= call_state.loader_text[0] && pc < call_state.loader_text[1]))
        return;
    /* a program that makes its own text writable and back, to patch or
     * relocate it, makes no new code */
    if (nr != SYS_mmap &&
        modules_own_text((uint64_t)a[0], (uint64_t)a[0] + (uint64_t)a[1]))
        return;
    if ((nr == SYS_mmap && !RAW_FAILED(ret)) ||
        ((nr == SYS_mprotect || nr == SYS_pkey_mprotect) && ret == 0)) {
        uint64_t none = 0;
        atomic_compare_exchange_strong(&call_state.code_made_first, &none, pc);
        atomic_fetch_add(&call_state.code_made, 1);
    }
}

void syscalls_end_stats(fmt_buf *b)
{
    unsigned long made = atomic_load(&call_state.code_made);
    unsigned long refused = atomic_load(&call_state.async_io_refused);
    if (made) {
        fmt_str(b, "code_made=");
        fmt_u64(b, made);
        fmt_str(b, "\ncode_made_first=0x");
        fmt_hex(b, atomic_load(&call_state.code_made_first));
        fmt_char(b, '\n');
    }
    if (refused) {
        fmt_str(b, "async_io_refused=");
        fmt_u64(b, refused);
        fmt_char(b, '\n');
    }
}

/* The loader's executable segments, from its program headers. */
static void find_loader_text(uint64_t out[2])
{
    const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)getauxval(AT_BASE);
    if (!eh)
        return;
    const ElfW(Phdr) *ph =
        (const ElfW(Phdr) *)(const void *)((const char *)eh + eh->e_phoff);
    for (int i = 0; i < eh->e_phnum; i++)
        if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X)) {
            out[0] = (uint64_t)eh + ph[i].p_vaddr;
            out[1] = out[0] + ph[i].p_memsz;
        }
}

/* Reads or writes n bytes of the program's memory at addr whatever its
 * pages' rights (the fault engine's, through complete.h) or through
 * process_vm_readv/writev (an address the kernel refuses gives -1, not a
 * fault in this handler); 0, or -1. */
static int program_bytes(void *buf, size_t n, uint64_t addr, int write)
{
    if (fault_enabled())
        return write ? complete_poke(addr, buf, n) : complete_peek(buf, n, addr);
    struct iovec local = { buf, n }, remote = { (void *)(uintptr_t)addr, n };
    long pid = raw_syscall3(SYS_getpid, 0, 0, 0);
    long got = raw_syscall6(write ? SYS_process_vm_writev : SYS_process_vm_readv, pid,
                            (long)&local, 1, (long)&remote, 1, 0);
    return got == (long)n ? 0 : -1;
}

/* The call with the traced pages of its arguments open: an exposed
 * window when other threads run meanwhile. */
static long call_opened(ucontext_t *uc, const sys_spec *sp, long nr,
                        const long *a)
{
    opened o;
    o.n = 0;
    if (sp && fault_enabled()) /* with nothing protected, none to open */
        open_args(&o, sp, a);
    if (o.n)
        fault_note_exposed(nr); /* the call may block: others run */
    long ret = syscall_call_waiting(uc, !fault_enabled(), nr, a);
    close_all(&o);
    return ret;
}

/* The call with its arguments in traced memory moved into memtap's
 * buffer while other threads run (bounce.h), when the table says what
 * each is: no page of the program open while it blocks.  1 when made so
 * (*ret). */
static int call_moved(ucontext_t *uc, const sys_spec *sp, long nr,
                      const long *a, long *ret)
{
    bounce_arg arg[6];
    bounce_args b;
    if (!fault_enabled() || !syscall_movable(sp, a, arg) ||
        bounce_args_in(&b, a, arg) != 0)
        return 0;
    *ret = syscall_call_waiting(uc, 0, nr, b.a);
    bounce_args_out(&b);
    return 1;
}

/* Whether an argument's buffer lies on a page the program itself made
 * inaccessible: its EFAULT is the program's (traced_refused). */
static int refused_args(const sys_spec *sp, const long *a)
{
    for (int i = 0; sp && i < 6; i++) {
        const arg_spec *x = &sp->args[i];
        if ((x->how == A_LEN || x->how == A_RET || x->how == A_FIXED ||
             x->how == A_ARRAY || x->how == A_FDSET) &&
            a[i] && traced_refused((uintptr_t)a[i], syscall_arg_bytes(x, a)))
            return 1;
    }
    return 0;
}

/* A call that met a closed page.  Another thread may have traced a page
 * of its arguments after this call looked (a new malloc arena's lock, say):
 * it goes once more as the table is now.  If it still fails, the memory is
 * one the table does not describe, and every page is opened for it (an
 * exposed window when others run). */
static long retry_closed(ucontext_t *uc, const sys_spec *sp, long nr,
                         const long *a)
{
    long ret;
    if (nr == SYS_futex && futex_emulate(a, &uc->uc_sigmask,
                                         syscall_signals_waking(nr, a, uc), &ret))
        return ret;
    ret = call_opened(uc, sp, nr, a);
    if (ret != -EFAULT || refused_args(sp, a))
        return ret;
    atomic_fetch_add(&call_state.reopened, 1);
    fault_note_exposed(nr);
    traced_set_active(0);
    ret = raw_syscall6(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
    traced_set_active(1);
    return ret;
}

/* Whether path (in the program's memory) names the process's own
 * executable's link: /proc/self/exe, /proc/thread-self/exe or
 * /proc/PID/exe. */
static int names_own_exe(uint64_t path)
{
    char p[40] = { 0 };
    for (size_t have = 0; have < sizeof p - 1;) {
        /* to the next 8-byte boundary: no page past the NUL is read */
        size_t step = 8 - (size_t)((path + have) & 7);
        step = step < sizeof p - 1 - have ? step : sizeof p - 1 - have;
        if (program_bytes(p + have, step, path + have, 0) != 0 ||
            memchr(p + have, '\0', step))
            break;
        have += step;
    }
    if (strcmp(p, "/proc/self/exe") == 0 || strcmp(p, "/proc/thread-self/exe") == 0)
        return 1;
    char own[32];
    fmt_buf f = { own, 0, sizeof own };
    fmt_str(&f, "/proc/");
    fmt_u64(&f, (uint64_t)raw_syscall3(SYS_getpid, 0, 0, 0));
    fmt_str(&f, "/exe");
    own[f.len < sizeof own ? f.len : sizeof own - 1] = '\0';
    return strcmp(p, own) == 0;
}

/* readlink or readlinkat of the process's own executable while it runs
 * from a copy in memtap's cache: the original's path, as natively (java's
 * launcher finds its runtime from it: "Error: could not find
 * libjava.so").  1 when answered (*ret). */
static int own_exe_link(long nr, const long *a, long *ret)
{
    const char *original = modules_exe_original();
    int at = nr == SYS_readlinkat;
    uint64_t path = (uint64_t)a[at], buf = (uint64_t)a[at + 1];
    size_t size = (size_t)a[at + 2];
    if (!*original || !path || (long)size <= 0 || !names_own_exe(path))
        return 0;
    size_t n = strlen(original);
    n = n < size ? n : size; /* (readlink writes no NUL) */
    *ret = program_bytes((void *)original, n, buf, 1) == 0 ? (long)n : -EFAULT;
    return 1;
}

/* The trapped call's result in the program's registers, or its syscall
 * instruction to run again after the handlers of what came. */
static void set_result(greg_t *g, long nr, long ret)
{
    if (ret == WAIT_CALL_RESTART)
        g[REG_RIP] -= 2;
    g[REG_RAX] = ret == WAIT_CALL_RESTART ? nr : ret;
}

static void on_sigsys_body(int sig, siginfo_t *si, ucontext_t *uc)
{
    if (si->si_code != 1 /* SYS_SECCOMP */) {
        sigtable_chain(sig, si, uc);
        return;
    }
    greg_t *g = uc->uc_mcontext.gregs;
    long nr = si->si_syscall;
    long a[6] = { g[REG_RDI], g[REG_RSI], g[REG_RDX],
                  g[REG_R10], g[REG_R8],  g[REG_R9] };
    atomic_fetch_add(&call_state.emulated, 1);
    fault_thread_trapped();
    execargs_reclaim();
    long ret;
    if (fdguard_syscall(nr, a, &ret) ||
        (nr == SYS_futex && futex_emulate(a, &uc->uc_sigmask,
                                          syscall_signals_waking(nr, a, uc), &ret))) {
        set_result(g, nr, ret);
        return;
    }
    if ((nr == SYS_readlink || nr == SYS_readlinkat) && own_exe_link(nr, a, &ret)) {
        g[REG_RAX] = ret;
        return;
    }
    if (nr == SYS_execve || nr == SYS_execveat) {
        g[REG_RAX] = execargs_run(nr, a, &uc->uc_sigmask);
        return;
    }
    if (nr == SYS_exit_group) {
        /* what exit did after the destructors (stdio's last flush) is
         * recorded; the trace ends out of this handler, as if the call had
         * been a call of process_exit, so that a consumer's or a tool's
         * last system calls are trapped as any are */
        g[REG_RDI] = a[0];
        g[REG_RSP] = (greg_t)((((uint64_t)g[REG_RSP] - 128) & ~(uint64_t)15) - 8);
        g[REG_RIP] = (greg_t)(uintptr_t)process_exit;
        return;
    }
    if (nr == SYS_sigaltstack) { /* memtap's stays: its handlers need the
                                    room (Python's faulthandler gives 16 KiB
                                    of heap, which a flush overran) */
        g[REG_RAX] = syscall_sigaltstack(uc, (const stack_t *)a[0],
                                         (stack_t *)a[1]);
        return;
    }
    if (nr == SYS_io_uring_setup || nr == SYS_io_setup) {
        /* the kernel would copy into and out of the program's buffers
         * later, outside any call: with traced pages closed that fails
         * (EFAULT in a completion), and no copy is recorded.  Programs
         * fall back to calls memtap sees, as where seccomp profiles
         * refuse these */
        atomic_fetch_add(&call_state.async_io_refused, 1);
        g[REG_RAX] = -ENOSYS;
        return;
    }
    if (nr == SYS_rt_sigprocmask) {
        g[REG_RAX] = syscall_sigprocmask(uc, a[0], (const uint64_t *)a[1],
                                         (uint64_t *)a[2], a[3]);
        return;
    }
    if (nr == SYS_rt_sigaction && a[3] == 8 && a[0] > 0 && a[0] < _NSIG &&
        !fault_nested_in_memtap()) { /* memtap's own calls are real */
        g[REG_RAX] = signals_raw_action((int)a[0], (const void *)a[1],
                                        (void *)a[2], !tracer_owns_process());
        return;
    }
    if (bounce_io(nr, a, &ret, syscall_signals_waking(nr, a, uc))) {
        record_block(syscall_spec(nr), a, ret, (uint64_t)g[REG_RIP] - 2);
    } else if (nr == SYS_munmap) {
        ret = traced_unmap(nr, a);
    } else if (nr == SYS_mmap && (a[3] & MAP_FIXED)) {
        ret = traced_unmap(nr, a);
    } else if (nr == SYS_mprotect && traced_has((uintptr_t)a[0],
                                                      (size_t)a[1])) {
        /* the program changes rights memtap is holding: remember them */
        ret = traced_mprotect((uintptr_t)a[0], (size_t)a[1], (int)a[2]);
    } else {
        sys_spec by_args;
        const sys_spec *sp = syscall_call_spec(nr, a, &by_args);
        long old_break = nr == SYS_brk ? raw_syscall3(SYS_brk, 0, 0, 0) : 0;
        if (nr == SYS_mremap)
            ret = traced_remap((uintptr_t)a[0], (size_t)a[1], (size_t)a[2], (int)a[3],
                               (uintptr_t)a[4]);
        else if (!call_moved(uc, sp, nr, a, &ret))
            ret = call_opened(uc, sp, nr, a);
        if (nr == SYS_madvise && ret == 0 &&
            (a[2] == MADV_DONTNEED || a[2] == MADV_DONTNEED_LOCKED))
            traced_dropped((uintptr_t)a[0], (size_t)a[1]); /* (an alias keeps its bytes) */
        if (ret == -EFAULT && traced_active())
            ret = retry_closed(uc, sp, nr, a);
        record_block(sp, a, ret, (uint64_t)g[REG_RIP] - 2);
        after_memory_call(nr, a, ret);
        if (nr == SYS_brk && ret < old_break) /* the heap shrank */
            traced_remove((uintptr_t)ret, (uintptr_t)old_break);
    }
    syscalls_note_code_made(nr, a, ret, (uint64_t)g[REG_RIP] - 2);
    set_result(g, nr, ret);
}

/* Its mask lets the park signal through: a call that blocks here must not
 * keep a stopper waiting. */
static void on_sigsys(int sig, siginfo_t *si, void *uc)
{
    fault_run_handler(on_sigsys_body, 0, sig, si, uc);
    /* the program's handlers of the signals that interrupted a waiting
     * call, out of memtap's work: as if they had come at the call */
    int caught;
    siginfo_t info;
    while (wait_call_take(&caught, &info)) {
        if (sigtable_runs_handler(sigtable_action(caught)))
            sigtable_chain(caught, &info, uc);
        else /* another thread changed its action: the kernel's to take */
            raw_syscall6(SYS_rt_tgsigqueueinfo, raw_syscall3(SYS_getpid, 0, 0, 0),
                         raw_syscall3(SYS_gettid, 0, 0, 0), caught, (long)&info, 0, 0);
    }
}

/* Without page protection (the static engine), the calls trapped besides
 * those naming memtap's descriptors, and the block calls of the table. */
static const int static_traps[] = {
    SYS_execve, SYS_execveat, SYS_rt_sigaction, SYS_rt_sigprocmask,
    SYS_io_uring_setup, SYS_io_setup, SYS_exit_group, SYS_sigaltstack,
    SYS_readlink, SYS_readlinkat,
};

int syscalls_init(int all)
{
    enum { NSTATIC = sizeof static_traps / sizeof *static_traps };
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigsys;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigbits_async(&sa.sa_mask);
    /* a call that blocks here must not keep a stopper waiting */
    sigdelset(&sa.sa_mask, __SIGRTMAX - 1);
    sa.sa_flags |= SA_RESTART;
    if (__sigaction(SIGSYS, &sa, NULL) != 0)
        return -1;
    int traps[SYSCALL_FILTER_TRAPS_MAX];
    size_t nt = syscall_block_calls(traps, SYSCALL_FILTER_TRAPS_MAX - NSTATIC);
    for (size_t i = 0; i < NSTATIC; i++)
        traps[nt++] = static_traps[i];
    find_loader_text(call_state.loader_text);
    call_state.all = all;
    if (syscall_filter_init(all, traps, nt) != 0)
        return -1;
    own_signals_claim(SIGSYS);
    call_state.enabled = 1;
    return 0;
}
