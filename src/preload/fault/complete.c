/*
 * complete.c - completes a faulting access inside the SIGSEGV handler (see
 * complete.h).  Owns the descriptor of /proc/self/mem, the code area the
 * instructions run from and the switch into and out of the program's
 * registers (complete_enter, below).
 *
 * The instruction is re-encoded (x86/access.h) once per instruction (kept in
 * an append-only code area, found by pc and bytes), its memory operand
 * replaced by (S), S a general register it does not name, which holds the
 * address of a copy of the operand's bytes on the handler's stack (at the
 * same offset modulo 64, so alignment rules hold as they did).
 * complete_enter loads the program's vector state (xrstor from the signal
 * frame), flags and general registers, jumps to that code (the
 * instruction, then a jump back) and saves them all again.  A lock per
 * cache line (hashed into 256) serializes completions that touch the same
 * line, so a locked read-modify-write stays atomic against every other
 * completed access (the handler runs with asynchronous signals blocked,
 * and nothing between taking and releasing it can fault).
 */
#define _GNU_SOURCE
#include "complete.h"
#include "x86/access.h"
#include "preload/core/config.h"
#include "preload/memmap/alias.h"
#include "preload/memmap/traced_set.h"

#include "sys/env.h"
#include "sys/hash.h"
#include "sys/own_flags.h"
#include "sys/page.h"
#include "sys/rawsys.h"
#include "sys/futex_lock.h"
#include "sys/spin.h"
#include "x86/context.h"

#include <fcntl.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#define MAX_BYTES 64
#define FP_XSTATE_MAGIC 0x46505853u   /* the signal frame holds xsave data */
/* x87, SSE, AVX and AVX-512's state (a VEX write to ymm clears the upper
 * half of its zmm): what complete_enter loads and saves; never AMX, whose
 * state the kernel hands out only on request */
#define XSTATE_RUN 0xe7u
#define ARITH_FLAGS 0x8d5ull          /* CF PF AF ZF SF OF */
/* and DF, and ID as it is (the handler's own: sigreturn leaves it so) */
#define LOADED_FLAGS (ARITH_FLAGS | 0x400ull | OWN_FLAGS_ID)

_Static_assert(offsetof(complete_regs, flags) == 128 &&
                   offsetof(complete_regs, xmask) == 136,
               "complete_enter's offsets");

void complete_enter(complete_regs *r, void *xsave_area, const void *code);
extern const char complete_back[];

/* The MXCSR the handler's code runs with, as complete_enter leaves it. */
__attribute__((used)) static const uint32_t complete_mxcsr = 0x1f80;

#define LOAD(off, reg) "  mov " #off "(%rdi), %" #reg "\n"
#define SAVE(off, reg) "  mov %" #reg ", " #off "(%rdi)\n"
/* Every general register but rsp (the run's own) and rdi (it holds the
 * complete_regs pointer), at its offset there. */
#define EACH_GPR(M)                                                       \
    M(0, rax) M(8, rcx) M(16, rdx) M(24, rbx) M(40, rbp) M(48, rsi)       \
    M(64, r8) M(72, r9) M(80, r10) M(88, r11) M(96, r12) M(104, r13)      \
    M(112, r14) M(120, r15)
__asm__(".text\n"
        ".p2align 4\n"
        ".globl complete_enter\n"
        ".hidden complete_enter\n"
        ".type complete_enter, @function\n"
        "complete_enter:\n"
        "  push %rbx\n  push %rbp\n  push %r12\n  push %r13\n"
        "  push %r14\n  push %r15\n"
        "  push %rdx\n"
        "  push %rdi\n"
        "  push %rsi\n"
        "  mov 136(%rdi), %eax\n"
        "  test %eax, %eax\n" /* an integer instruction: none to load */
        "  jz 2f\n"
        "  xor %edx, %edx\n"
        "  xrstor64 (%rsi)\n"
        "2:\n"
        "  pushq 128(%rdi)\n"
        "  popfq\n"
        EACH_GPR(LOAD) LOAD(56, rdi)
        "  jmp *16(%rsp)\n"
        ".globl complete_back\n"
        ".hidden complete_back\n"
        "complete_back:\n"
        "  xchg %rdi, 8(%rsp)\n"
        "  pushfq\n"
        "  popq 128(%rdi)\n"
        EACH_GPR(SAVE)
        "  mov 8(%rsp), %rax\n"
        "  mov %rax, 56(%rdi)\n"
        "  pushfq\n" /* memtap's flags again: all clear but ID (OWN_FLAGS_ID) */
        "  andl $0x200000, (%rsp)\n"
        "  orl $2, (%rsp)\n"
        "  popfq\n"
        "  pop %rsi\n"
        "  mov 136(%rdi), %eax\n"
        "  test %eax, %eax\n" /* nothing loaded: memtap's state still */
        "  jz 1f\n"
        "  xor %edx, %edx\n"
        "  xsave64 (%rsi)\n"
        "  fninit\n"
        "  ldmxcsr complete_mxcsr(%rip)\n"
        "1:\n"
        "  add $16, %rsp\n"
        "  pop %r15\n  pop %r14\n  pop %r13\n  pop %r12\n"
        "  pop %rbp\n  pop %rbx\n"
        "  ret\n"
        ".size complete_enter, .-complete_enter\n");
#undef EACH_GPR
#undef LOAD
#undef SAVE

#define CODE_BYTES (1u << 20)   /* the code area: about 30,000 instructions */
#define CODE_ENTRY 32           /* an instruction, a jump back, its register */
#define INDEX_SLOTS 65536       /* twice as many as the area holds */
#define STRIPES 256

/* One instruction's code: found by pc and its bytes. */
typedef struct code_key {
    _Atomic uint64_t pc;        /* published last: 0 while being written */
    uint8_t bytes[X86_MAX_LENGTH];
    uint8_t scratch;            /* S's number */
    uint32_t offset;            /* in the code area */
} code_key;

static struct {
    int on;              /* completions: not under MEMTAP_FAULT_PATH=step */
    int mem;             /* fd reads and writes the process's memory, for
                            completions and for the system calls memtap
                            makes on traced memory (bounce.c, futex.c) */
    int fd;
    /* A page the kernel clears in a forked child (MADV_WIPEONFORK): its
     * zero tells a child, however it was forked, that fd still reads its
     * parent; without the page, the pid is compared. */
    _Atomic uint8_t *forked_mark;
    long pid;
    uint8_t *code;       /* the code area (read, write, execute) */
    uint32_t code_used;
    code_key *index;     /* open addressing on pc; entries never leave */
    atomic_int code_lock;
    atomic_int stripes[STRIPES];
    _Atomic uint64_t completed;
} c = { .fd = -1 };

/* The least number the memory descriptor takes: beside the trace's
 * (700) and the status page's (701), far above those programs choose. */
#define MEM_FD_MIN 702

static int open_mem(void)
{
    long fd = raw_syscall3(SYS_open, "/proc/self/mem", O_RDWR | O_CLOEXEC, 0);
    if (RAW_FAILED(fd))
        return -1;
    if (fd != c.fd) {
        /* keep the number fdguard knows (a forked child), or take one
         * out of the program's way: fdguard refuses a dup2 onto it */
        long moved = c.fd >= 0 ? raw_syscall3(SYS_dup3, fd, c.fd, O_CLOEXEC)
                               : raw_syscall3(SYS_fcntl, fd, F_DUPFD_CLOEXEC, MEM_FD_MIN);
        raw_syscall3(SYS_close, fd, 0, 0);
        if (RAW_FAILED(moved))
            return -1;
        fd = moved;
    }
    c.fd = (int)fd;
    c.pid = raw_syscall3(SYS_getpid, 0, 0, 0);
    if (c.forked_mark)
        atomic_store(c.forked_mark, 1);
    return 0;
}

static void *map(size_t len, int prot)
{
    long p = raw_syscall6(SYS_mmap, 0, (long)len, prot,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return RAW_FAILED(p) ? NULL : (void *)p;
}

int complete_init(void)
{
    c.forked_mark = map(4096, PROT_READ | PROT_WRITE);
    if (c.forked_mark &&
        RAW_FAILED(raw_syscall3(SYS_madvise, c.forked_mark, 4096,
                                MADV_WIPEONFORK))) {
        raw_syscall3(SYS_munmap, c.forked_mark, 4096, 0);
        c.forked_mark = NULL;
    }
    /* stepping every access still makes the system calls memtap makes
     * on traced memory through the descriptor: opening all pages for a
     * contended lock's futex would expose every thread */
    c.mem = open_mem() == 0;
    if (config()->fault_path == FAULT_PATH_STEP || !c.mem)
        return -1;
    c.code = map(CODE_BYTES, PROT_READ | PROT_WRITE | PROT_EXEC);
    c.index = map(INDEX_SLOTS * sizeof *c.index, PROT_READ | PROT_WRITE);
    if (!c.code || !c.index) {
        if (c.code)
            raw_syscall3(SYS_munmap, c.code, CODE_BYTES, 0);
        if (c.index)
            raw_syscall3(SYS_munmap, c.index, INDEX_SLOTS * sizeof *c.index, 0);
        return -1;
    }
    c.on = 1;
    return 0;
}

void complete_after_fork(void)
{
    /* a thread that held one when the parent forked is not in the child */
    atomic_store(&c.code_lock, 0);
    for (int i = 0; i < STRIPES; i++)
        atomic_store(&c.stripes[i], 0);
}

int complete_fd(void) { return c.mem ? c.fd : -1; }
uint64_t complete_count(void) { return atomic_load(&c.completed); }

int complete_operand(const x86_access_insn *insn)
{
    return c.on ? x86_access_completable(insn, MAX_BYTES) : -1;
}

/* Encodes insn with operand `mem` as (S) for a register S it does not
 * name, then `jmp *0(%rip)` back to complete_back, at `to`: S's number, or
 * -1 when nothing encodes. */
static int encode(const x86_access_insn *insn, int mem, uint8_t *to)
{
    size_t n;
    int s = x86_access_encode_through(insn, mem, to, &n);
    if (s < 0)
        return -1;
    static const uint8_t jmp[6] = { 0xff, 0x25, 0, 0, 0, 0 };
    uint64_t back = (uint64_t)(uintptr_t)complete_back;
    memcpy(to + n, jmp, sizeof jmp);
    memcpy(to + n + sizeof jmp, &back, sizeof back);
    return s;
}

static int same_insn(const code_key *k, uint64_t pc, const uint8_t *bytes,
                     size_t len)
{
    return atomic_load_explicit(&k->pc, memory_order_acquire) == pc &&
           memcmp(k->bytes, bytes, len) == 0;
}

/* The code of insn at pc, whose bytes are `bytes` (the program's text, or
 * the copy hot.c kept of a patched site), made on first sight, with S's
 * number in *s; NULL when it cannot be made or the area is full. */
static const uint8_t *code_for(const x86_access_insn *insn, int mem,
                               uint64_t pc, const uint8_t *bytes, int *s)
{
    size_t len = x86_access_length(insn);
    size_t h = (size_t)(fib_mix(pc) % INDEX_SLOTS);
    for (size_t probes = 0; probes < INDEX_SLOTS; probes++) {
        code_key *k = &c.index[(h + probes) % INDEX_SLOTS];
        if (same_insn(k, pc, bytes, len)) {
            *s = k->scratch;
            return c.code + k->offset;
        }
        if (atomic_load_explicit(&k->pc, memory_order_acquire) != 0)
            continue;
        /* an empty slot: add the instruction here unless another thread
         * took the slot first (then look on) */
        spin_acquire(&c.code_lock);
        const uint8_t *made = NULL;
        if (atomic_load(&k->pc) == 0 &&
            c.code_used + CODE_ENTRY <= CODE_BYTES) {
            int reg = encode(insn, mem, c.code + c.code_used);
            if (reg >= 0) {
                memcpy(k->bytes, bytes, len);
                k->scratch = (uint8_t)reg;
                k->offset = c.code_used;
                c.code_used += CODE_ENTRY;
                atomic_store_explicit(&k->pc, pc, memory_order_release);
                *s = reg;
                made = c.code + k->offset;
            }
        }
        int taken = atomic_load(&k->pc) != 0;
        spin_release(&c.code_lock);
        if (made || !taken)
            return made;
        if (same_insn(k, pc, bytes, len)) {
            *s = k->scratch;
            return c.code + k->offset;
        }
    }
    return NULL;
}

/* The lock of the cache line at addr. */
static atomic_int *stripe_of(uint64_t addr)
{
    return &c.stripes[fib_mix(addr >> 6) % STRIPES];
}

/* The signal frame's xsave area, when it is one complete_enter can use
 * and the program's floating-point exceptions are all masked (an unmasked
 * one could be raised inside the handler). */
static void *xsave_area(const ucontext_t *uc, uint32_t *mask)
{
    const uint8_t *fp = (const uint8_t *)uc->uc_mcontext.fpregs;
    if (!fp || ((uintptr_t)fp & 63))
        return NULL;
    uint32_t magic;
    uint64_t features;
    memcpy(&magic, fp + 464, sizeof magic);
    memcpy(&features, fp + 472, sizeof features);
    const struct _libc_fpstate *fx = uc->uc_mcontext.fpregs;
    if (magic != FP_XSTATE_MAGIC || (features & 3) != 3 ||
        (fx->cwd & 0x3f) != 0x3f || (fx->mxcsr & 0x1f80) != 0x1f80)
        return NULL;
    *mask = (uint32_t)(features & XSTATE_RUN);
    return (void *)(uintptr_t)fp;
}

/* In a forked child (however it forked), the descriptor and pid this
 * process's own: 0, or -1. */
static int own_process(void)
{
    int forked = c.forked_mark ? atomic_load(c.forked_mark) == 0
                               : raw_syscall3(SYS_getpid, 0, 0, 0) != c.pid;
    return forked ? open_mem() : 0;
}

static int mem_io(long nr, void *buf, size_t n, uint64_t addr)
{
    if (own_process() != 0)
        return -1;
    long got = raw_syscall6(nr, c.fd, (long)buf, (long)n, (long)addr, 0, 0);
    return got == (long)n ? 0 : -1;
}

int complete_mem_read(void *buf, size_t n, uint64_t addr)
{
    return c.mem ? mem_io(SYS_pread64, buf, n, addr) : -1;
}

int complete_mem_write(uint64_t addr, const void *buf, size_t n)
{
    return c.mem ? mem_io(SYS_pwrite64, (void *)(uintptr_t)buf, n, addr) : -1;
}

/* Reads (nr SYS_pread64) or writes (SYS_pwrite64) n bytes at addr
 * whatever the pages' rights: through a page's alias where it has one
 * (a shared page refuses /proc/self/mem's writes), else /proc/self/mem;
 * inside a completion (aliases change in none).  0, or -1. */
static int mem_pieces(long nr, uint8_t *buf, size_t n, uint64_t addr)
{
    if (!alias_count())
        return mem_io(nr, buf, n, addr);
    while (n > 0) {
        size_t piece = PAGE - (addr & (PAGE - 1));
        piece = piece < n ? piece : n;
        uint8_t *a = alias_at(addr);
        if (a && nr == SYS_pwrite64)
            memcpy(a, buf, piece);
        else if (a)
            memcpy(buf, a, piece);
        else if (mem_io(nr, buf, piece, addr) != 0)
            return -1;
        buf += piece;
        addr += piece;
        n -= piece;
    }
    return 0;
}

/* mem_pieces outside a completion: one is made around it when [addr,
 * addr+n) is traced and may have aliases. */
static int mem_access(long nr, void *buf, size_t n, uint64_t addr)
{
    if (!c.mem)
        return -1;
    if (!alias_enabled() || !traced_has(addr, n))
        return mem_io(nr, buf, n, addr);
    sigset_t old;
    int guard = traced_reach_begin(&old);
    int rc = mem_pieces(nr, buf, n, addr);
    traced_reach_end(guard, &old);
    return rc;
}

int complete_peek(void *buf, size_t n, uint64_t addr)
{
    return mem_access(SYS_pread64, buf, n, addr);
}

int complete_indirect(const x86_access_insn *insn, uint64_t addr,
                      uint64_t *target)
{
    if (!c.on || !x86_access_indirect_branch(insn))
        return 0;
    return mem_access(SYS_pread64, target, sizeof *target, addr) == 0;
}

int complete_push(uint64_t sp, uint64_t value)
{
    /* process_vm_writev keeps the page's rights (a guard page refuses),
     * which /proc/self/mem would override */
    if (own_process() != 0)
        return -1;
    struct iovec local = { &value, sizeof value };
    struct iovec remote = { (void *)(uintptr_t)sp, sizeof value };
    long n = raw_syscall6(SYS_process_vm_writev, c.pid, (long)&local, 1,
                          (long)&remote, 1, 0);
    return n == (long)sizeof value ? 0 : -1;
}

int complete_poke(uint64_t addr, const void *buf, size_t n)
{
    return mem_access(SYS_pwrite64, (void *)(uintptr_t)buf, n, addr);
}

static int run_locked(const ucontext_t *uc, const x86_access *op,
                      int direct, void *xsave, const uint8_t *code, int s,
                      complete_regs *st)
{
    uint64_t addr = op->addr;
    size_t n = op->size;
    uint8_t buf[2 * MAX_BYTES] __attribute__((aligned(MAX_BYTES)));
    /* an operand inside one aliased page is run on there, as on the page */
    uint8_t *alias = direct || (addr & (PAGE - 1)) + n > PAGE ? NULL : alias_at(addr);
    direct |= alias != NULL;
    uint8_t *copy = alias ? alias
                    : direct ? (uint8_t *)(uintptr_t)addr
                             : buf + (addr & (MAX_BYTES - 1));
    /* a plain store writes every byte: nothing to read first */
    if (!direct && !op->overwrites &&
        mem_pieces(SYS_pread64, copy, n, addr) != 0)
        return -1;
    const greg_t *g = uc->uc_mcontext.gregs;
    for (int i = 0; i < 16; i++)
        st->gpr[i] = (uint64_t)g[x86_greg_of[i]];
    st->gpr[s] = (uint64_t)(uintptr_t)copy;
    st->flags = ((uint64_t)g[REG_EFL] & LOADED_FLAGS) | 2;
    complete_enter(st, xsave, code);
    st->gpr[s] = (uint64_t)g[x86_greg_of[s]];
    if (!direct && op->write &&
        mem_pieces(SYS_pwrite64, copy, n, addr) != 0)
        return -1;
    return 0;
}

/* Set while this thread runs an instruction in complete_run. */
static __thread int tls_running __attribute__((tls_model("initial-exec")));

int complete_running(void) { return tls_running; }

int complete_run(const ucontext_t *uc, const x86_access_insn *insn, int mem,
                 const x86_access *op, int direct, const uint8_t *bytes,
                 complete_regs *after, void (*done)(void *arg), void *arg)
{
    void *xsave = xsave_area(uc, &after->xmask);
    if (xsave && x86_access_integer_only(insn))
        after->xmask = 0; /* the state stays as it is, in the frame */
    int s;
    const uint8_t *code =
        xsave ? code_for(insn, mem, (uint64_t)uc->uc_mcontext.gregs[REG_RIP],
                         bytes, &s)
              : NULL;
    if (!code)
        return 0;
    /* the operand's first and last cache lines, in one order */
    atomic_int *a = stripe_of(op->addr);
    atomic_int *b = stripe_of(op->addr + op->size - 1);
    if (b < a) {
        atomic_int *t = a;
        a = b;
        b = t;
    }
    /* a fault inside a completion (the program's handler run meanwhile,
     * touching traced memory) cannot complete here: its stripe is held */
    if (tls_running)
        return 0;
    futex_lock(a);
    if (b != a)
        futex_lock(b);
    tls_running = 1;
    int rc = run_locked(uc, op, direct, xsave, code, s, after);
    tls_running = 0;
    if (rc == 0 && done)
        done(arg);
    if (b != a)
        futex_unlock(b);
    futex_unlock(a);
    return rc == 0;
}

void complete_commit(ucontext_t *uc, const x86_access_insn *insn,
                     const complete_regs *after)
{
    greg_t *g = uc->uc_mcontext.gregs;
    for (int i = 0; i < 16; i++)
        g[x86_greg_of[i]] = (greg_t)after->gpr[i];
    g[REG_EFL] = (greg_t)(((uint64_t)g[REG_EFL] & ~ARITH_FLAGS) |
                          (after->flags & ARITH_FLAGS));
    g[REG_RIP] += x86_access_length(insn);
}

void complete_counted(void) { atomic_fetch_add(&c.completed, 1); }
