/*
 * syscall_table.c - the system calls memtap emulates and what their
 * arguments point at (syscall_table.h).  Safe in signal handlers: tables
 * and pure functions.
 */
#define _GNU_SOURCE
#include "syscall_table.h"
#include "preload/fault/futex.h"
#include "syscall_filter.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#define L(n) { A_LEN, n, 0 }
#define R(n) { A_RET, n, 0 }
#define F(n) { A_FIXED, n, 0 }
#define S { A_STR, 0, 0 }
#define V(n) { A_IOV, n, 0 }
#define M { A_MSG, 0, 0 }
#define MM(n) { A_MMSG, n, 0 }
#define N { A_NONE, 0, 0 }
#define ARR(n, size) { A_ARRAY, n, size }
#define FDS(n) { A_FDSET, n, 0 }
#define P(n) { A_NESTED, n, 0 }

/* A row: the call, its block kind, whether bounce_args_in may move its
 * arguments (1: the table sizes them exactly and the kernel keeps no
 * address of them; not futex, whose word is its address; not ioctl,
 * fcntl or getsockopt, sized by a guess unless syscall_call_spec knows
 * the request), what each argument points at. */
static const sys_spec table[] = {
    { SYS_read, 'W', 0, { N, R(2), N, N, N, N } },
    { SYS_pread64, 'W', 0, { N, R(2), N, N, N, N } },
    { SYS_write, 'G', 0, { N, L(2), N, N, N, N } },
    { SYS_pwrite64, 'G', 0, { N, L(2), N, N, N, N } },
    { SYS_readv, 'W', 0, { N, V(2), N, N, N, N } },
    { SYS_preadv, 'W', 0, { N, V(2), N, N, N, N } },
    { SYS_preadv2, 'W', 0, { N, V(2), N, N, N, N } },
    { SYS_writev, 'G', 0, { N, V(2), N, N, N, N } },
    { SYS_pwritev, 'G', 0, { N, V(2), N, N, N, N } },
    { SYS_pwritev2, 'G', 0, { N, V(2), N, N, N, N } },
    { SYS_recvfrom, 'W', 0, { N, R(2), N, N, F(128), F(4) } },
    { SYS_sendto, 'G', 0, { N, L(2), N, N, F(128), N } },
    { SYS_recvmsg, 'W', 0, { N, M, N, N, N, N } },
    { SYS_sendmsg, 'G', 0, { N, M, N, N, N, N } },
    { SYS_recvmmsg, 'W', 0, { N, MM(2), N, N, F(16), N } },
    { SYS_sendmmsg, 'G', 0, { N, MM(2), N, N, N, N } },
    { SYS_getrandom, 'W', 1, { R(1), N, N, N, N, N } },
    { SYS_getdents64, 0, 1, { N, L(2), N, N, N, N } },
    { SYS_readlink, 0, 1, { S, L(2), N, N, N, N } },
    { SYS_readlinkat, 0, 1, { N, S, L(3), N, N, N } },
    { SYS_getcwd, 0, 1, { L(1), N, N, N, N, N } },
    { SYS_open, 0, 1, { S, N, N, N, N, N } },
    { SYS_openat, 0, 1, { N, S, N, N, N, N } },
    { SYS_stat, 0, 1, { S, F(144), N, N, N, N } },
    { SYS_lstat, 0, 1, { S, F(144), N, N, N, N } },
    { SYS_fstat, 0, 1, { N, F(144), N, N, N, N } },
    { SYS_newfstatat, 0, 1, { N, S, F(144), N, N, N } },
    { SYS_statx, 0, 1, { N, S, N, N, F(256), N } },
    { SYS_access, 0, 1, { S, N, N, N, N, N } },
    { SYS_faccessat, 0, 1, { N, S, N, N, N, N } },
    { SYS_faccessat2, 0, 1, { N, S, N, N, N, N } },
    { SYS_unlink, 0, 1, { S, N, N, N, N, N } },
    { SYS_unlinkat, 0, 1, { N, S, N, N, N, N } },
    { SYS_mkdir, 0, 1, { S, N, N, N, N, N } },
    { SYS_rename, 0, 1, { S, S, N, N, N, N } },
    { SYS_chdir, 0, 1, { S, N, N, N, N, N } },
    { SYS_clock_gettime, 0, 1, { N, F(16), N, N, N, N } },
    { SYS_gettimeofday, 0, 1, { F(16), F(8), N, N, N, N } },
    { SYS_nanosleep, 0, 1, { F(16), F(16), N, N, N, N } },
    { SYS_clock_nanosleep, 0, 1, { N, N, F(16), F(16), N, N } },
    { SYS_uname, 0, 1, { F(390), N, N, N, N, N } },
    { SYS_sysinfo, 0, 1, { F(112), N, N, N, N, N } },
    { SYS_getrusage, 0, 1, { N, F(144), N, N, N, N } },
    { SYS_wait4, 0, 1, { N, F(4), N, F(144), N, N } },
    { SYS_pipe, 0, 1, { F(8), N, N, N, N, N } },
    { SYS_pipe2, 0, 1, { F(8), N, N, N, N, N } },
    { SYS_socketpair, 0, 1, { N, N, N, F(8), N, N } },
    { SYS_sigaltstack, 0, 0, { F(24), F(24), N, N, N, N } },
    { SYS_prlimit64, 0, 1, { N, N, F(16), F(16), N, N } },
    { SYS_getrlimit, 0, 1, { N, F(16), N, N, N, N } },
    { SYS_poll, 0, 1, { ARR(1, 8), N, N, N, N, N } },
    { SYS_ppoll, 0, 1, { ARR(1, 8), N, F(16), F(8), N, N } },
    { SYS_select, 0, 1, { N, FDS(0), FDS(0), FDS(0), F(16), N } },
    /* the C library's select (its last argument NULL) */
    { SYS_pselect6, 0, 1, { N, FDS(0), FDS(0), FDS(0), F(16), P(16) } },
    /* struct epoll_event: 12 bytes (packed on x86-64) */
    { SYS_epoll_wait, 0, 1, { N, ARR(2, 12), N, N, N, N } },
    { SYS_epoll_pwait, 0, 1, { N, ARR(2, 12), N, N, F(8), N } },
    { SYS_epoll_ctl, 0, 1, { N, N, N, F(12), N, N } },
    { SYS_futex, 0, 0, { F(4), N, N, F(16), F(4), N } },
    { SYS_connect, 0, 1, { N, L(2), N, N, N, N } },
    { SYS_bind, 0, 1, { N, L(2), N, N, N, N } },
    { SYS_accept, 0, 1, { N, F(128), F(4), N, N, N } },
    { SYS_accept4, 0, 1, { N, F(128), F(4), N, N, N } },
    { SYS_getsockname, 0, 1, { N, F(128), F(4), N, N, N } },
    { SYS_getpeername, 0, 1, { N, F(128), F(4), N, N, N } },
    { SYS_getsockopt, 0, 0, { N, N, N, F(256), F(4), N } },
    { SYS_setsockopt, 0, 1, { N, N, N, L(4), N, N } },
    { SYS_sched_getaffinity, 0, 1, { N, N, L(1), N, N, N } },
    { SYS_ioctl, 0, 0, { N, N, F(256), N, N, N } },
    { SYS_fcntl, 0, 0, { N, N, F(64), N, N, N } },
    { SYS_time, 0, 1, { F(8), N, N, N, N, N } },
    { SYS_times, 0, 1, { F(32), N, N, N, N, N } },
};

const sys_spec *syscall_spec(long nr)
{
    for (size_t i = 0; i < sizeof table / sizeof *table; i++)
        if (table[i].nr == nr)
            return &table[i];
    return NULL;
}

/* every block call, and syscalls.c's own traps, in the static engine's
 * filter */
_Static_assert(sizeof table / sizeof *table + 16 <= SYSCALL_FILTER_TRAPS_MAX,
               "the filter holds every call the static engine traps");

size_t syscall_block_calls(int *out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < sizeof table / sizeof *table && n < max; i++)
        if (table[i].block)
            out[n++] = table[i].nr;
    return n;
}

/* futex's pointers after the word depend on the operation: a timeout at
 * a[3] for the waits and locks, a second word at a[4] for the requeues,
 * wake_op and wait_requeue_pi (where a[3] is a count); a wake passes
 * nothing there (glibc makes it with three arguments: the others are
 * whatever the registers held, a heap pointer say, whose page opening it
 * would expose).  The word's own page is not opened for the calls
 * futex_emulate makes (private waits and wakes): a word traced after it
 * looked (another thread's malloc traced its page) fails with EFAULT,
 * and retry_closed emulates the call then.  The table's entry, its
 * arguments kept by op, in *out. */
static const sys_spec *futex_spec(const long *a, sys_spec *out)
{
    *out = *syscall_spec(SYS_futex);
    int timeout = 0, second = 0;
    switch ((int)a[1] & FUTEX_CMD_MASK) {
    case FUTEX_WAIT: case FUTEX_WAIT_BITSET: case FUTEX_LOCK_PI:
    case FUTEX_LOCK_PI2:
        timeout = 1;
        break;
    case FUTEX_WAIT_REQUEUE_PI:
        timeout = second = 1;
        break;
    case FUTEX_REQUEUE: case FUTEX_CMP_REQUEUE: case FUTEX_WAKE_OP:
    case FUTEX_CMP_REQUEUE_PI:
        second = 1;
        break;
    default:
        break;
    }
    if (futex_emulates_op((int)a[1]))
        out->args[0] = (arg_spec)N;
    if (!timeout)
        out->args[3] = (arg_spec)N;
    if (!second)
        out->args[4] = (arg_spec)N;
    return out;
}

/* ioctl requests whose size the request number does not encode (the
 * terminal's and every file's, older than the encoding) that memtap
 * knows: the bytes their argument points at (0: it is a number, or
 * nothing), none holding pointers of its own. */
static const struct {
    uint32_t request;
    uint16_t bytes;
} known_ioctls[] = {
    { TCGETS, 36 }, { TCSETS, 36 }, { TCSETSW, 36 }, { TCSETSF, 36 }, /* the kernel's termios */
    { TIOCGWINSZ, 8 }, { TIOCSWINSZ, 8 },
    { TIOCGPGRP, 4 }, { TIOCSPGRP, 4 }, { TIOCGSID, 4 }, { TIOCOUTQ, 4 },
    { FIONREAD, 4 }, { FIONBIO, 4 }, { FIOASYNC, 4 },
    { TCSBRK, 0 }, { TCSBRKP, 0 }, { TCXONC, 0 }, { TCFLSH, 0 }, { TIOCSCTTY, 0 },
    { TIOCNOTTY, 0 }, { TIOCEXCL, 0 }, { TIOCNXCL, 0 }, { TIOCSBRK, 0 },
    { TIOCCBRK, 0 }, { FIOCLEX, 0 }, { FIONCLEX, 0 },
};

/* out made movable, its third argument `bytes` long (0: a number, which
 * points at nothing): a request or command memtap knows. */
static const sys_spec *known_third(sys_spec *out, unsigned bytes)
{
    out->movable = 1;
    out->args[2] = bytes ? (arg_spec)F(bytes) : (arg_spec)N;
    return out;
}

/* ioctl's argument as its request says: a known one's exact bytes, moved
 * (no window while it blocks); one whose number encodes a size and a
 * direction, those bytes (opened: a driver's structure may hold pointers
 * of its own); any other the table's guess. */
static const sys_spec *ioctl_spec(const long *a, sys_spec *out)
{
    *out = *syscall_spec(SYS_ioctl);
    uint32_t request = (uint32_t)a[1];
    for (size_t i = 0; i < sizeof known_ioctls / sizeof *known_ioctls; i++)
        if (known_ioctls[i].request == request)
            return known_third(out, known_ioctls[i].bytes);
    if (_IOC_DIR(request) != _IOC_NONE)
        out->args[2] = (arg_spec)F(_IOC_SIZE(request));
    return out;
}

/* fcntl's argument as its command says: a lock's struct flock, an
 * owner's struct f_owner_ex, a write hint's 64 bits (moved), a number
 * (nothing to open); an unknown command keeps the table's guess. */
static const sys_spec *fcntl_spec(const long *a, sys_spec *out)
{
    *out = *syscall_spec(SYS_fcntl);
    unsigned bytes;
    switch ((int)a[1]) {
    case F_GETLK: case F_SETLK: case F_SETLKW:
    case F_OFD_GETLK: case F_OFD_SETLK: case F_OFD_SETLKW:
        bytes = sizeof(struct flock);
        break;
    case F_GETOWN_EX: case F_SETOWN_EX:
        bytes = sizeof(struct f_owner_ex);
        break;
    case F_GET_RW_HINT: case F_SET_RW_HINT: case F_GET_FILE_RW_HINT:
    case F_SET_FILE_RW_HINT:
        bytes = 8;
        break;
    case F_DUPFD: case F_DUPFD_CLOEXEC: case F_GETFD: case F_SETFD:
    case F_GETFL: case F_SETFL: case F_GETOWN: case F_SETOWN: case F_GETSIG:
    case F_SETSIG: case F_GETLEASE: case F_SETLEASE: case F_NOTIFY:
    case F_GETPIPE_SZ: case F_SETPIPE_SZ: case F_ADD_SEALS: case F_GET_SEALS:
        bytes = 0;
        break;
    default:
        return out;
    }
    return known_third(out, bytes);
}

const sys_spec *syscall_call_spec(long nr, const long *a, sys_spec *out)
{
    switch (nr) {
    case SYS_futex: return futex_spec(a, out);
    case SYS_ioctl: return ioctl_spec(a, out);
    case SYS_fcntl: return fcntl_spec(a, out);
    default: return syscall_spec(nr);
    }
}

uint64_t syscall_arg_bytes(const arg_spec *x, const long *a)
{
    if (x->how == A_FIXED || x->how == A_NESTED)
        return x->n;
    /* counts are the kernel's to refuse: a negative one is no extent */
    uint64_t count = a[x->n] < 0 ? 0 : (uint64_t)a[x->n];
    switch (x->how) {
    case A_LEN:
    case A_RET: return count;
    case A_ARRAY: return count > (1u << 24) ? 0 : count * x->size;
    case A_FDSET: /* the kernel's FDS_BYTES: whole longs */
        return count > (1u << 24) ? 0 : (count + 63) / 64 * 8;
    default: return 0;
    }
}

int syscall_movable(const sys_spec *sp, const long *a, bounce_arg arg[6])
{
    if (!sp || !sp->movable)
        return 0;
    for (int k = 0; k < 6; k++) {
        const arg_spec *x = &sp->args[k];
        if (x->how == A_NESTED && a[k])
            return 0;
        arg[k].kind = x->how == A_STR    ? BOUNCE_STRING
                      : x->how == A_NONE ? BOUNCE_KEEP
                                         : BOUNCE_BYTES;
        arg[k].n = syscall_arg_bytes(x, a);
    }
    return 1;
}
