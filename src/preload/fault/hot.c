/*
 * hot.c - hot sites of the fault engine (see hot.h).  Owns the count of
 * completions per instruction, the patched sites, their trampolines and
 * the switch from a trampoline into C and back (hot_entry, below).
 *
 * A site is patched without knowing where branches land: only the
 * instruction's own bytes change, into a punned jmp rel32 to a trampoline
 * live_code.c places.  A thread that meets the int3 of a patch in
 * progress goes back and waits (hot_trap).  A hot instruction right
 * after a patched site, closer than 5 bytes (its own jump would change
 * the site's), is run by the site's trampoline too; one right before a
 * patched site is patched as any, its jump's tail being the site's jump
 * (which is then given its bytes back only after it); instructions of one
 * byte, other sites too close, and sites with no free page in reach stay
 * on the signal path (counted as refused), tried again at 2, 4 ... 64
 * times the completions that made them hot (a site patched right after
 * one since changes the bytes its jump's window depends on).
 *
 * The trampoline steps over the red zone, pushes the site's number and
 * jumps to hot_entry, which saves the general registers and flags on the
 * program's stack, moves to memtap's own stack (own_stack_for), saves the
 * vector state there (about 7 KiB with C's frames) and calls hot_access, in which memtap's asynchronous handlers defer their signals
 * (defer.c).  That completes each access as the handler would (fault.c:
 * through /proc/self/mem, the page left closed, recorded, or on the
 * memory itself when it is not traced), then returns past the
 * instructions.  When the site's own cannot be completed (a rare state:
 * unmasked x87 or SSE exceptions, say), the site is unpatched and the
 * instruction runs again on the signal path.
 */
#define _GNU_SOURCE
#include "hot.h"
#include "x86/insn.h"
#include "preload/core/own_stack.h"
#include "sys/futex_lock.h"
#include "sys/hash.h"
#include "sys/own_flags.h"
#include "sys/rawsys.h"

#include "complete.h"
#include "preload/core/config.h"
#include "preload/core/defer.h"
#include "fault.h"
#include "fault_insn.h"
#include "live_code.h"
#include "preload/memmap/traced_set.h"

#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#define COUNT_SLOTS 262144      /* instructions counted (python3.11's
                                   interpreter completes accesses at more
                                   than 16,384: the hot ones found no slot) */
#define MAX_SITES 32768         /* instructions patched */
#define SLOT_BYTES 24           /* one trampoline */
#define HOT_AFTER 16            /* completions that make a site hot */
#define RUN_MAX 4               /* instructions one trampoline runs */
#define XSAVE_BYTES 4096        /* x87, SSE, AVX and AVX-512 state fit */
#define FP_XSTATE_MAGIC 0x46505853u
#define XSTATE_RUN 0xe7         /* the components complete.c runs with */
#define STR(x) #x
#define XSTR(x) STR(x)

/* What hot_entry pushed, lowest address first; above it the red zone
 * (128 bytes) and then the program's stack. */
typedef struct hot_frame {
    uint64_t gpr[15];   /* r15 first, rax last (frame_regs) */
    uint64_t flags;
    uint64_t slot;      /* in: the site's number; out: where to go on */
} hot_frame;

/* The ucontext register of each of hot_frame's gpr. */
static const int frame_regs[15] = {
    REG_R15, REG_R14, REG_R13, REG_R12, REG_R11, REG_R10, REG_R9, REG_R8,
    REG_RDI, REG_RSI, REG_RBP, REG_RBX, REG_RDX, REG_RCX, REG_RAX,
};

/* One instruction a trampoline runs. */
typedef struct hot_insn {
    uint64_t pc;
    uint8_t bytes[X86_MAX_LENGTH]; /* the instruction's own */
    uint8_t len;
    int mem;                       /* its memory operand */
    x86_access_insn insn;
} hot_insn;

/* A patched site: the instruction whose bytes jump to the trampoline, and
 * the hot ones right after it, too close to be patched themselves (their
 * jump would change this one's displacement), which the trampoline runs
 * too.  `n` is published after the instruction it adds is whole. */
typedef struct hot_site {
    uint64_t trampoline;
    _Atomic int patched;
    _Atomic uint32_t n;
    hot_insn run[RUN_MAX];
} hot_site;

typedef struct hot_count {
    _Atomic uint64_t pc;
    _Atomic uint32_t n;
    _Atomic uint32_t site;      /* its site's number + 1, set before the
                                   site's bytes change (0: none) */
} hot_count;

static struct {
    int on;
    uint32_t after;            /* completions that make a site hot */
    uint64_t xfeatures;        /* XCR0's share of XSTATE_RUN */
    x86_decoder decoder;
    hot_count *counts;
    hot_site *sites;
    _Atomic uint32_t nsites;   /* published after a site is whole */
    atomic_int lock;           /* patching and unpatching */
    _Atomic uint64_t accesses, untraced, refused, unpatched;
} hot_state;

static __thread const hot_site *tls_site __attribute__((tls_model("initial-exec")));
/* In hot_access (a critical section: memtap's asynchronous handlers
 * defer their signals, defer.c). */
static __thread int tls_in_access __attribute__((tls_model("initial-exec")));
/* The calling thread holds hot_state.lock (in hot_completed). */
static __thread int tls_patching __attribute__((tls_model("initial-exec")));

void hot_access(hot_frame *fr, uint8_t *xsave);

/* The trampolines' common part: everything saved, hot_access called on
 * 64-byte aligned xsave space on memtap's own stack (own_stack_for: a
 * goroutine's stack has no room for it), everything loaded, and
 * `ret $128` goes to the frame's slot and back over the red zone. */
__asm__(".text\n"
        ".globl hot_entry\n"
        ".hidden hot_entry\n"
        ".type hot_entry, @function\n"
        "hot_entry:\n"
        "  endbr64\n"
        "  pushfq\n"
        "  push %rax\n  push %rcx\n  push %rdx\n  push %rbx\n"
        "  push %rbp\n  push %rsi\n  push %rdi\n"
        "  push %r8\n  push %r9\n  push %r10\n  push %r11\n"
        "  push %r12\n  push %r13\n  push %r14\n  push %r15\n"
        "  mov %rsp, %rbx\n"
        OWN_FLAGS_ASM("120(%rsp)") /* pushed before the 15 registers */
        "  mov %rsp, %rdi\n"
        "  and $-16, %rsp\n"
        "  call own_stack_for\n"
        "  mov %rax, %rsp\n"
        "  and $-64, %rsp\n"
        "  sub $" XSTR(XSAVE_BYTES) ", %rsp\n"
        "  xor %eax, %eax\n"
        "  mov %rax, 512(%rsp)\n  mov %rax, 520(%rsp)\n"
        "  mov %rax, 528(%rsp)\n  mov %rax, 536(%rsp)\n"
        "  mov %rax, 544(%rsp)\n  mov %rax, 552(%rsp)\n"
        "  mov %rax, 560(%rsp)\n  mov %rax, 568(%rsp)\n"
        "  mov $" XSTR(XSTATE_RUN) ", %eax\n"
        "  xor %edx, %edx\n"
        "  xsave64 (%rsp)\n"
        "  cld\n"
        "  mov %rbx, %rdi\n"
        "  mov %rsp, %rsi\n"
        "  call hot_access\n"
        "  mov $" XSTR(XSTATE_RUN) ", %eax\n"
        "  xor %edx, %edx\n"
        "  xrstor64 (%rsp)\n"
        "  mov %rbx, %rsp\n"
        "  pop %r15\n  pop %r14\n  pop %r13\n  pop %r12\n"
        "  pop %r11\n  pop %r10\n  pop %r9\n  pop %r8\n"
        "  pop %rdi\n  pop %rsi\n  pop %rbp\n  pop %rbx\n"
        "  pop %rdx\n  pop %rcx\n  pop %rax\n"
        "  popfq\n"
        "  ret $128\n"
        ".size hot_entry, .-hot_entry\n");
extern const char hot_entry[];

_Static_assert(sizeof(hot_frame) == 17 * 8, "hot_entry's pushes");

static void *map(size_t len)
{
    long p = raw_syscall6(SYS_mmap, 0, (long)len, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return RAW_FAILED(p) ? NULL : (void *)p;
}

int hot_init(void)
{
    const preload_config *cfg = config();
    if (cfg->fault_path == FAULT_PATH_STEP ||
        cfg->fault_path == FAULT_PATH_COMPLETE)
        return -1;
    hot_state.after = cfg->fault_path == FAULT_PATH_HOT ? 1 : HOT_AFTER;
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    hot_state.xfeatures = (((uint64_t)hi << 32) | lo) & XSTATE_RUN;
    if ((hot_state.xfeatures & 3) != 3 ||
        x86_decoder_init(&hot_state.decoder) != 0 ||
        live_code_init() != 0)
        return -1;
    hot_state.counts = map(COUNT_SLOTS * sizeof *hot_state.counts);
    hot_state.sites = map(MAX_SITES * sizeof *hot_state.sites);
    if (!hot_state.counts || !hot_state.sites)
        return -1;
    hot_state.on = 1;
    return 0;
}

void hot_after_fork(void) { atomic_store(&hot_state.lock, 0); }

/* ---- patching ---- */

/* The trampoline of site number i at t. */
static int write_trampoline(uint64_t t, uint32_t i)
{
    uint8_t b[SLOT_BYTES] = {
        0x48, 0x8d, 0x64, 0x24, 0x80, /* lea -128(%rsp), %rsp */
        0x68, 0, 0, 0, 0,             /* push $i */
        0xff, 0x25, 0, 0, 0, 0,       /* jmp *0(%rip) */
    };
    uint64_t entry = (uint64_t)(uintptr_t)hot_entry;
    memcpy(b + 6, &i, 4);
    memcpy(b + 16, &entry, 8);
    return complete_poke(t, b, sizeof b);
}

static hot_count *count_of(uint64_t pc, int make);

/* The site patched at pc (its count knows it); NULL when none. */
static hot_site *site_at(uint64_t pc)
{
    const hot_count *c = count_of(pc, 0);
    uint32_t site = c ? atomic_load(&c->site) : 0;
    return site ? &hot_state.sites[site - 1] : NULL;
}

/* The site whose jump covers pc (it starts 1 to 4 bytes before), or one
 * that starts inside the len bytes at pc, which a jump there would
 * change; NULL when none.  A site that starts after them, closer than 5
 * bytes, is no crowd: a jump at pc takes the site's jump bytes as they are
 * for its displacement's high bytes (tail), and the site is not given its
 * own bytes back before this one (unpatch). */
static hot_site *crowding(uint64_t pc, size_t len)
{
    for (uint64_t at = pc - 4; at < pc + len; at++) {
        hot_site *s = at == pc ? NULL : site_at(at);
        if (s)
            return s;
    }
    return NULL;
}

/* Reads and decodes the instruction at pc (len bytes, and 4 after it
 * into `tail`) into in.  0, or -1 when it is not one complete.c runs. */
static int take_insn(hot_insn *in, uint64_t pc, size_t len, uint8_t *tail)
{
    uint8_t text[X86_MAX_LENGTH + 4];
    memset(in, 0, sizeof *in);
    if (complete_peek(text, len + 4, pc) != 0 ||
        x86_access_decode(&hot_state.decoder, text, len, &in->insn) != 0 ||
        x86_access_length(&in->insn) != len ||
        (in->mem = complete_operand(&in->insn)) < 0)
        return -1;
    in->pc = pc;
    in->len = (uint8_t)len;
    memcpy(in->bytes, text, len);
    memcpy(tail, text + len, 4);
    return 0;
}

/* A hot instruction too close to patched site s: run by s's trampoline
 * when it follows s's last instruction. */
static int append(hot_site *s, uint64_t pc, size_t len)
{
    uint32_t n = atomic_load(&s->n);
    const hot_insn *last = &s->run[n - 1];
    uint8_t tail[4];
    if (!atomic_load(&s->patched) || n == RUN_MAX ||
        last->pc + last->len != pc ||
        take_insn(&s->run[n], pc, len, tail) != 0)
        return -1;
    atomic_store(&s->n, n + 1);
    return 0;
}

static int patch(hot_count *count, uint64_t pc, size_t len)
{
    uint32_t i = atomic_load(&hot_state.nsites);
    hot_site *near = crowding(pc, len);
    if (near)
        return near->run[0].pc < pc ? append(near, pc, len) : -1;
    uint8_t tail[4];
    hot_site *s = &hot_state.sites[i];
    if (len < 2 || i == MAX_SITES)
        return -1;
    memset(s, 0, sizeof *s);
    if (take_insn(&s->run[0], pc, len, tail) != 0)
        return -1;
    uint64_t t;
    if (live_code_slot(pc, len, tail, SLOT_BYTES, &t) != 0 ||
        write_trampoline(t, i) != 0)
        return -1;
    s->trampoline = t;
    s->n = 1;
    uint8_t jump[X86_MAX_LENGTH + 4];
    uint32_t rel = (uint32_t)(t - (pc + 5));
    jump[0] = 0xe9;
    memcpy(jump + 1, &rel, 4);
    for (size_t k = len; k < 5; k++) /* no libc here: see unpatch */
        if (jump[k] != tail[k - len])
            return -1; /* the displacement's fixed bytes: cannot differ */
    /* published before its int3 can be met, or its bytes read torn */
    atomic_store(&s->patched, 1);
    atomic_store(&hot_state.nsites, i + 1);
    atomic_store(&count->site, i + 1);
    if (live_code_write(pc, jump, len < 5 ? len : 5) != 0) {
        atomic_store(&s->patched, 0);
        return -1;
    }
    return 0;
}

/* Gives site s its own bytes back, after the sites right before it
 * (depth: how many such steps led here); the caller holds hot_state.lock. */
static void restore(hot_site *s, int depth)
{
    if (!atomic_load(&s->patched))
        return;
    const hot_insn *in = &s->run[0];
    /* first the sites just before, whose jumps end in this one's bytes */
    for (uint64_t at = in->pc - 4; at < in->pc && depth < 8; at++) {
        hot_site *before = site_at(at);
        if (before && before != s)
            restore(before, depth + 1);
    }
    size_t len = in->len < 5 ? in->len : 5;
    if (live_code_write(in->pc, in->bytes, len) == 0) {
        atomic_store(&s->patched, 0);
        atomic_fetch_add(&hot_state.unpatched, 1);
    }
}

/* Gives a site its own bytes back (hot_access could not run it).  The
 * calling thread may hold hot_state.lock already: patch() reached a site through
 * code outside memtap (none is called there now; a libc memcmp was, and a
 * hot site in it whose access failed would have waited on this thread's
 * own lock forever). */
static void unpatch(const hot_site *cs)
{
    int held = tls_patching;
    if (!held)
        futex_lock(&hot_state.lock);
    restore(&hot_state.sites[cs - hot_state.sites], 0);
    if (!held)
        futex_unlock(&hot_state.lock);
}

/* The count of pc, made on first sight when `make`; NULL when there is
 * none (or no room). */
static hot_count *count_of(uint64_t pc, int make)
{
    size_t at = (size_t)(fib_mix(pc) % COUNT_SLOTS);
    for (size_t probes = 0; probes < 64; probes++) {
        hot_count *c = &hot_state.counts[(at + probes) % COUNT_SLOTS];
        uint64_t seen = atomic_load(&c->pc);
        if (seen == pc)
            return c;
        if (seen == 0) {
            uint64_t none = 0;
            if (!make)
                return NULL;
            if (atomic_compare_exchange_strong(&c->pc, &none, pc) || none == pc)
                return c;
        }
    }
    return NULL;
}

const uint8_t *hot_site_bytes(uint64_t pc)
{
    const hot_site *s = hot_state.on ? site_at(pc) : NULL;
    return s ? s->run[0].bytes : NULL;
}

/* Whether the n-th completion at c's instruction tries to patch it: at
 * `after` (hot), and for one refused so far (no site) at twice, four
 * times ... 64 times as many (a site patched since right after it may
 * have left its jump room). */
static int patch_due(uint32_t n, const hot_count *c)
{
    uint32_t times = n / hot_state.after;
    return n == hot_state.after ||
           (n % hot_state.after == 0 && times <= 64 && !(times & (times - 1)) &&
            !atomic_load(&c->site));
}

void hot_completed(uint64_t pc, unsigned len)
{
    if (!hot_state.on)
        return;
    hot_count *c = count_of(pc, 1);
    if (!c)
        return;
    uint32_t n = atomic_fetch_add(&c->n, 1) + 1;
    if (!patch_due(n, c))
        return;
    futex_lock(&hot_state.lock);
    tls_patching = 1;
    if (patch(c, pc, len) != 0 && n == hot_state.after)
        atomic_fetch_add(&hot_state.refused, 1);
    tls_patching = 0;
    futex_unlock(&hot_state.lock);
}

int hot_trap(ucontext_t *uc)
{
    if (!hot_state.on)
        return 0;
    uint64_t at = (uint64_t)uc->uc_mcontext.gregs[REG_RIP] - 1;
    if (!site_at(at))
        return 0;
    uc->uc_mcontext.gregs[REG_RIP] = (greg_t)at;
    raw_syscall3(SYS_sched_yield, 0, 0, 0);
    return 1;
}

/* ---- the trampolines' accesses ---- */

/* One execution of tls_site's run, in fault.c's handler bracket (or, for
 * memtap's own code, `quiet`: not the program's accesses).  An
 * instruction after the first that cannot be completed is left to run
 * where it is (the trampoline returns to it). */
static void hot_run(ucontext_t *uc, const hot_site *s, int quiet)
{
    uint32_t n = atomic_load(&s->n);
    for (uint32_t i = 0; i < n; i++) {
        const hot_insn *in = &s->run[i];
        int done = fault_complete_access(uc, &in->insn, in->mem, in->bytes,
                                         quiet ? FAULT_RECORD_NONE : FAULT_RECORD_TRACED);
        if (!done) {
            if (i == 0)
                unpatch(s); /* uc's pc is the site's: it runs as it was */
            return;
        }
        if (!quiet)
            atomic_fetch_add(done == 1 ? &hot_state.accesses : &hot_state.untraced, 1);
    }
}

static void hot_body(int sig, siginfo_t *si, ucontext_t *uc)
{
    (void)sig;
    (void)si;
    hot_run(uc, tls_site, 0);
}

void hot_access(hot_frame *fr, uint8_t *xsave)
{
    const hot_site *s = &hot_state.sites[fr->slot];
    if (tls_in_access) {
        /* memtap's own code ran into a site while completing an access (a
         * libc function it calls, memset say, hot for the program): the
         * site gets its bytes back and runs as it is, so that accesses do
         * not nest (one in the site's own function would never end).
         * Nothing before this line may call outside memtap. */
        unpatch(s);
        fr->slot = s->run[0].pc;
        return;
    }
    tls_in_access++;
    defer_enter();
    ucontext_t uc;
    memset(&uc, 0, sizeof uc);
    greg_t *g = uc.uc_mcontext.gregs;
    for (int i = 0; i < 15; i++)
        g[frame_regs[i]] = (greg_t)fr->gpr[i];
    g[REG_RSP] = (greg_t)((uint64_t)(uintptr_t)(&fr->slot + 1) + 128);
    g[REG_EFL] = (greg_t)fr->flags;
    g[REG_RIP] = (greg_t)s->run[0].pc;
    /* the software bytes a signal frame's xsave area carries */
    uint32_t magic = FP_XSTATE_MAGIC;
    memcpy(xsave + 464, &magic, sizeof magic);
    memcpy(xsave + 472, &hot_state.xfeatures, sizeof hot_state.xfeatures);
    uc.uc_mcontext.fpregs = (struct _libc_fpstate *)(void *)xsave;
    if (fault_in_memtap()) {
        /* memtap's own code ran into the site: its access, not the
         * program's */
        hot_run(&uc, s, 1);
    } else {
        tls_site = s;
        fault_run_handler(hot_body, 1, 0, NULL, &uc);
        fault_thread_trapped();
    }
    for (int i = 0; i < 15; i++)
        fr->gpr[i] = (uint64_t)g[frame_regs[i]];
    fr->flags = (uint64_t)g[REG_EFL];
    fr->slot = (uint64_t)g[REG_RIP];
    defer_leave(); /* what came meanwhile is delivered now */
    tls_in_access--;
}

void hot_end_stats(fmt_buf *b)
{
    if (!hot_state.on)
        return;
    static const char *const keys[] = { "hot_sites=", "\nhot_followers=",
                                        "\nhot_accesses=", "\nhot_untraced=",
                                        "\nhot_refused=", "\nhot_unpatched=" };
    uint64_t v[] = { 0, 0, atomic_load(&hot_state.accesses), atomic_load(&hot_state.untraced),
                     atomic_load(&hot_state.refused), atomic_load(&hot_state.unpatched) };
    for (uint32_t i = 0; i < atomic_load(&hot_state.nsites); i++)
        if (atomic_load(&hot_state.sites[i].patched)) {
            v[0]++;
            v[1] += atomic_load(&hot_state.sites[i].n) - 1;
        }
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        fmt_str(b, keys[i]);
        fmt_u64(b, v[i]);
    }
    fmt_char(b, '\n');
}
