/*
 * syscall_filter.c - the seccomp filters that turn the system calls made
 * from the traced modules' text into SIGSYS (syscalls.c handles them):
 * one over the modules of start-up, and one more for each later batch of
 * dlopen'd libraries that make system calls themselves.
 */
#define _GNU_SOURCE
#include "syscall_filter.h"

#include "fdguard.h"
#include "preload/modules/modules.h"
#include "preload/record/tracer.h"
#include "sys/rawsys.h"
#include "sys/spin.h"

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

static struct {
    int installed;
    int all;                          /* syscall_filter_init's */
    int traps[SYSCALL_FILTER_TRAPS_MAX];
    size_t ntraps;
    uint32_t covered;                 /* modules the filters cover */
    unsigned later;                   /* filters installed after start-up */
    atomic_int lock;                  /* over the above after start-up */
} filter_state;

/* Calls that are never trapped: no user memory, or not emulable. */
static const int passthrough[] = {
    SYS_rt_sigreturn, SYS_exit, SYS_clone, SYS_clone3,
    SYS_fork, SYS_vfork, SYS_getpid, SYS_gettid, SYS_getppid, SYS_sched_yield,
    SYS_dup, SYS_lseek,
    SYS_kill, SYS_tgkill, SYS_tkill, SYS_getuid, SYS_geteuid, SYS_getgid,
    SYS_getegid, SYS_set_tid_address, SYS_set_robust_list, SYS_rseq,
    SYS_restart_syscall, SYS_alarm, SYS_pause, SYS_fsync, SYS_fdatasync,
    SYS_ftruncate, SYS_socket, SYS_listen, SYS_shutdown, SYS_umask,
    SYS_getpgrp, SYS_setsid, SYS_sched_getscheduler, SYS_membarrier,
};

/* The [lo, hi) ranges of text cut at each 4 GiB boundary into pieces
 * whose addresses share their high 32 bits, which is how the filter
 * compares (a C library loaded across a boundary is common enough: ASLR
 * put it there in about one run of 3000, and its calls were not trapped).
 * Returns how many pieces, at most max. */
static size_t text_pieces(const uint64_t (*ranges)[2], size_t n,
                          uint64_t (*out)[2], size_t max)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        for (uint64_t lo = ranges[i][0]; lo < ranges[i][1] && k < max;) {
            uint64_t boundary = (lo | 0xffffffffu) + 1;
            uint64_t hi = boundary && boundary < ranges[i][1] ? boundary
                                                              : ranges[i][1];
            out[k][0] = lo;
            out[k][1] = hi;
            k++;
            lo = hi;
        }
    return k;
}

enum { MAX_RANGES = 128, MAX_PIECES = MAX_RANGES + 32,
       NPASS = sizeof passthrough / sizeof *passthrough,
       FILTER_MAX = 8 + 6 * MAX_PIECES + NPASS + SYSCALL_FILTER_TRAPS_MAX + 48,
       /* filters for modules loaded later (each call runs every one) */
       MAX_LATER_FILTERS = 32 };

static const char too_many_ranges[] =
    "memtap: warning: more code segments than the system call filter "
    "holds: calls from the last ones are not trapped (they may fail "
    "with EFAULT on traced memory, and their copies are not "
    "recorded)\n";

/* The filter over the text pieces of ranges[0..nr): calls made from them
 * are trapped, except the passthrough ones (all) or all but filter_state.traps
 * (!all); everything else (memtap's own calls, the
 * loader's, and any process image that replaces this one by exec, whose
 * modules lie elsewhere) passes.  Returns the filter's length. */
static size_t filter_build(struct sock_filter *prog,
                           const uint64_t (*ranges)[2], size_t nr)
{
    size_t n = 0;
#define STMT(c, k) prog[n++] = (struct sock_filter)BPF_STMT(c, k)
#define JUMP(c, k, t, f) prog[n++] = (struct sock_filter)BPF_JUMP(c, k, t, f)
    STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
    JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
    STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    /* each piece: high word equal, low word in [lo, hi - 1] -> "check"
     * (a jump always, whose offset has 32 bits: the conditional ones have
     * 8, too few to pass more than 42 pieces) */
    for (size_t i = 0; i < nr; i++) {
        uint64_t lo = ranges[i][0], last = ranges[i][1] - 1;
        uint32_t left = (uint32_t)(nr - i - 1) * 6 + 1; /* to "check" */
        STMT(BPF_LD | BPF_W | BPF_ABS,
             offsetof(struct seccomp_data, instruction_pointer) + 4);
        JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)(lo >> 32), 0, 4);
        STMT(BPF_LD | BPF_W | BPF_ABS,
             offsetof(struct seccomp_data, instruction_pointer));
        JUMP(BPF_JMP | BPF_JGE | BPF_K, (uint32_t)lo, 0, 2);
        JUMP(BPF_JMP | BPF_JGT | BPF_K, (uint32_t)last, 1, 0);
        STMT(BPF_JMP | BPF_JA, left);
    }
    STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW); /* in no traced text */
    /* check: calls that name memtap's descriptors are trapped, the same
     * calls naming others pass */
    int fds[FDGUARD_MAX] = { -1, -1, -1, -1 };
    int nfd = fdguard_fds(fds);
    for (int i = nfd; i > 0 && i < FDGUARD_MAX; i++)
        fds[i] = fds[nfd - 1]; /* fewer: the last one again */
    uint32_t lo = (uint32_t)fds[0], hi = (uint32_t)fds[FDGUARD_MAX - 1];
    static const struct { int nr, arg; } fd_calls[] = {
        { SYS_close, 0 }, { SYS_dup2, 1 }, { SYS_dup3, 1 },
    };
    for (size_t i = 0; i < sizeof fd_calls / sizeof *fd_calls; i++) {
        STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
        JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)fd_calls[i].nr, 0, FDGUARD_MAX + 3);
        STMT(BPF_LD | BPF_W | BPF_ABS,
             offsetof(struct seccomp_data, args[fd_calls[i].arg]));
        for (int k = 0; k < FDGUARD_MAX; k++) /* to the trap */
            JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)fds[k], (uint8_t)(FDGUARD_MAX - k), 0);
        STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
        STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP);
    }
    /* close_range(first, last, flags): trapped when it may cover one */
    STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
    JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_close_range, 0, 6);
    STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0]));
    JUMP(BPF_JMP | BPF_JGT | BPF_K, hi, 3, 0);
    STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1]));
    JUMP(BPF_JMP | BPF_JGE | BPF_K, lo, 0, 1);
    STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP);
    STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
    if (filter_state.all) { /* everything but the passthrough calls */
        for (size_t i = 0; i < NPASS; i++)
            JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)passthrough[i],
                 (uint8_t)(NPASS - i), 0);
        STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP);
        STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    } else { /* executable mappings (syscalls_note_code_made: the
              * program's mmap calls reach libmemtap's mmap, not here),
              * the calls of filter_state.traps */
        JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mmap, 2, 0);
        JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mprotect, 1, 0);
        JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_pkey_mprotect, 0, 4);
        STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2]));
        JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 0, 1);
        STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP);
        STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
        for (size_t i = 0; i < filter_state.ntraps; i++)
            JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)filter_state.traps[i],
                 (uint8_t)(filter_state.ntraps - i), 0);
        STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
        STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP);
    }
#undef STMT
#undef JUMP
    return n;
}

/* Installs a filter for every thread; 0 on success.  With CAP_SYS_ADMIN
 * (root) a filter needs no no_new_privs, which would take set-user-ID
 * programs' privileges away from the children. */
static int filter_install(struct sock_filter *prog, size_t n)
{
    struct sock_fprog fp = { (unsigned short)n, prog };
    long flags = SECCOMP_FILTER_FLAG_TSYNC;
    if (raw_syscall6(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, (long)&fp,
                     0, 0, 0) == 0)
        return 0;
    if (raw_syscall6(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0, 0) != 0)
        return -1;
    return raw_syscall6(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags,
                        (long)&fp, 0, 0, 0) == 0 ? 0 : -1;
}

int syscall_filter_init(int all, const int *traps, size_t ntraps)
{
    if (ntraps > SYSCALL_FILTER_TRAPS_MAX)
        return -1;
    filter_state.all = all;
    memcpy(filter_state.traps, traps, ntraps * sizeof *traps);
    filter_state.ntraps = ntraps;
    uint64_t found[MAX_RANGES][2], ranges[MAX_PIECES][2];
    uint32_t from = 0;
    size_t nfound = modules_text_ranges(&from, 0, found, MAX_RANGES);
    if (nfound > MAX_RANGES) {
        /* rewritten copies have hundreds of executable segments each, of
         * trampolines (gdb's 59 modules 4,776): those whose bytes hold no
         * syscall instruction make none (gdb's: 103 left) */
        from = 0;
        nfound = modules_text_ranges(&from, 1, found, MAX_RANGES);
    }
    size_t nr = text_pieces(found, nfound < MAX_RANGES ? nfound : MAX_RANGES,
                            ranges, MAX_PIECES);
    if (nr == 0)
        return -1;
    if (nfound > MAX_RANGES || nr == MAX_PIECES)
        raw_say_lit(too_many_ranges);
    struct sock_filter prog[FILTER_MAX];
    if (filter_install(prog, filter_build(prog, ranges, nr)) != 0)
        return -1;
    filter_state.covered = from;
    filter_state.installed = 1;
    return 0;
}

void syscall_filter_cover_new(void)
{
    if (!filter_state.installed)
        return;
    tracer_internal_enter(); /* the scan's memmem is memtap's */
    spin_acquire(&filter_state.lock);
    uint64_t found[MAX_RANGES][2], ranges[MAX_PIECES][2];
    size_t nfound = modules_text_ranges(&filter_state.covered, 1, found, MAX_RANGES);
    size_t nr = text_pieces(found, nfound < MAX_RANGES ? nfound : MAX_RANGES,
                            ranges, MAX_PIECES);
    if (nr && filter_state.later == MAX_LATER_FILTERS) {
        static const char msg[] =
            "memtap: warning: too many loaded libraries make system calls "
            "themselves: calls from the last ones are not trapped (they may "
            "fail with EFAULT on traced memory, and their copies are not "
            "recorded)\n";
        raw_say_lit(msg);
        filter_state.later++;
    } else if (nr && filter_state.later < MAX_LATER_FILTERS) {
        if (nfound > MAX_RANGES || nr == MAX_PIECES)
            raw_say_lit(too_many_ranges);
        struct sock_filter prog[FILTER_MAX];
        if (filter_install(prog, filter_build(prog, ranges, nr)) != 0) {
            static const char msg[] =
                "memtap: warning: cannot extend the system call filter to a "
                "loaded library that makes system calls itself: they may "
                "fail with EFAULT on traced memory, and their copies are not "
                "recorded\n";
            raw_say_lit(msg);
        }
        filter_state.later++;
    }
    spin_release(&filter_state.lock);
    tracer_internal_leave();
}
