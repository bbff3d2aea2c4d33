/*
 * rewritten.c - the runtime of programs and libraries rewritten by
 * `memtap instrument` (see rt/abi.h), inside libmemtap.so.
 *
 * At start-up and after each dlopen it finds the modules that carry a
 * rewritten segment and fills in their slots (the module's tag, the flush
 * function and, last, the TLS offset of this library's log cursor, which
 * turns logging on).  The trampolines append 16-byte entries to the
 * calling thread's buffer without locks or system calls; when the buffer
 * is full they call rewritten_flush() through the flush stub, which hands the entries to the tracer as they are
 * (access runs, expanded when the trace is read through the module's site
 * table, which hook() gives the tracer first), or turns them into L and S
 * records for a shadow-memory tool.  A thread's entries are also handed
 * over before any other event of that thread (an allocation, a free), so
 * the trace keeps its order.  With
 * MEMTAP_CONSUMER set, the entries go to the user's memtap_consume()
 * instead (memtap/consumer.h).
 *
 * It also writes the int3 of the sites that had no room for a jump (the
 * SIGTRAP handler sends each to its trampoline), and for files rewritten
 * with --profile gives the count stub its counters and writes them out as
 * block-count records at the end.
 *
 * One file: hooking, the traps, check-once and the flush share the module
 * table that signal handlers read without a lock.
 */
#define _GNU_SOURCE
#include "rewritten.h"
#include "preload/signal/sigtable.h"
#include "preload/core/own_stack.h"
#include "preload/core/filters.h"
#include "preload/core/own_signals.h"
#include "sys/rawsys.h"
#include "preload/core/config.h"
#include "preload/core/defer.h"
#include "sys/env.h"
#include "sys/spin.h"
#include "sys/own_flags.h"
#include "sys/page.h"

#include "preload/fault/fault.h"
#include "preload/memmap/traced_set.h"
#include "preload/core/fmt.h"
#include "preload/core/own_text.h"
#include "preload/record/strings.h"
#include "preload/record/tracer.h"
#include "rt/abi.h"

#include "memtap/consumer.h"

#include <dlfcn.h>
#include <link.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#define MAX_MODULES 255
/* Entries per thread buffer: a mapping of MT_BUFFER_ALIGN bytes, aligned
 * so, less its first entry, so that the buffer ends at the boundary the
 * trampolines look for and its start is not one.  Its entries usually
 * stand for well under a chunk's records (65536 by default,
 * MEMTAP_BUFFER_RECORDS), so handing it over completes at most one chunk, and a thread's chunks
 * reach the writer spread out rather than two at once, the second waiting
 * for the first (16384 entries here: walk 1.23 s, 4096: 1.19 s). */
#define ENTRIES (MT_BUFFER_ALIGN / sizeof(mt_entry) - 1)
#define SCRATCH 256u            /* entries of memtap's own work, dropped */

/* The trampolines' entries are what the trace format's access runs hold. */
_Static_assert(sizeof(mt_entry) == sizeof(trace_entry) &&
               offsetof(mt_entry, addr) == offsetof(trace_entry, addr) &&
               MT_SITE_BITS == MEMTAP_SITE_BITS,
               "entry layout");

typedef struct rt_module {
    uint64_t bias;
    uint64_t header;            /* runtime address of the header */
    uint32_t ntraps;
    const mt_trap *traps;       /* sorted by pc (link-time) */
    uint64_t *counters;         /* --profile: one per block, then a copy
                                   of blocks (memtap's: the module may go) */
    const uint64_t *blocks;
    uint32_t nblocks;
    uint64_t source_id;
    uint64_t span;              /* link-time end of the segment */
    uint32_t nchecks;           /* 0 unless checks can be removed */
    const mt_check *checks;
    const mt_log_shape *log;    /* its log sequence; NULL: not described */
    uint64_t size;              /* the segment's bytes from the header */
} rt_module;

/* The cursor: the trampolines read and write it through %fs, so it must
 * stay in the initial-exec TLS block. */
typedef struct rt_tls {
    uint64_t cursor;
} rt_tls;

static struct {
    rt_module mods[MAX_MODULES];
    trace_site_table tabs[MAX_MODULES]; /* the modules' sites, by tag */
    uint8_t seen[MAX_MODULES];  /* rewritten_scan found the module loaded */
    _Atomic uint32_t nmods;
    atomic_int lock;
    int discard;                /* MEMTAP_REWRITE_DISCARD=1: measure the
                                   logging path alone, record nothing */
    int trap_handler;           /* SIGTRAP is ours (the fault engine is off) */
    int fault_handlers;         /* SIGSEGV, SIGBUS, SIGFPE, SIGILL too */
    int debug_traps;            /* MEMTAP_DEBUG_TRAPS: name unknown traps */
    int check_once;             /* MEMTAP_TOOL_CHECK_ONCE=1: uninit's
                                   passed loads stop logging */
    unsigned drop;              /* RT_KEEP_*: the memory whose accesses are
                                   dropped (what MEMTAP_ONLY leaves out) */
    atomic_int closed;          /* the window is closed: entries dropped */
    void (*consume)(const memtap_access *, size_t);
    void (*consume_end)(void);
    _Atomic uint64_t traps_hit;
    _Atomic uint64_t past_leader; /* of those, at a trap past_leader */
    _Atomic uint64_t restarts;  /* log sequences a signal sent back */
    _Atomic uint64_t checks_removed;
    _Atomic uint64_t entries;   /* logged by rewritten code, handed over */
    uint64_t refused[MAX_MODULES]; /* headers hook() turned down */
    _Atomic uint32_t nrefused;
    uint64_t bypassed[8];       /* the hooked modules' mt_rewrite_header
                                   bypassed, added up */
    uint32_t nbypass;
    mt_entry *scratch_end;      /* where the scratch entries end (a buffer
                                   that every thread's memtap work writes
                                   into, never read) */
} rt;

static __thread rt_tls tls_log __attribute__((tls_model("initial-exec")));
static __thread mt_entry *tls_base __attribute__((tls_model("initial-exec")));
static __thread int tls_flushing __attribute__((tls_model("initial-exec")));
/* Depth of memtap's own work on the program's behalf (an allocator call,
 * a block operation): what rewritten code logs meanwhile is dropped. */
static __thread int tls_own __attribute__((tls_model("initial-exec")));
static __thread rt_tls tls_saved __attribute__((tls_model("initial-exec")));

/* The records that come with an entry (trace_entry_expand) into out
 * (room for TRACE_EXPAND_MAX), with d those still due; at the end of
 * the entries (e NULL), those still due. */
static size_t entry_records(trace_deferred *d, const mt_entry *e,
                            memtap_record *out)
{
    trace_sites sites = { rt.tabs, atomic_load(&rt.nmods) };
    return e ? trace_entry_expand(&sites, d, (const trace_entry *)e, out)
             : trace_deferred_flush(d, out);
}

/* Hands the entries to the user's consumer in batches. */
static void consume_entries(const mt_entry *e, const mt_entry *end)
{
    memtap_access batch[128];
    memtap_record r[TRACE_EXPAND_MAX];
    trace_deferred d;
    d.n = 0;
    size_t n = 0;
    for (int more = 1; more; e += more) {
        more = e < end;
        size_t k = entry_records(&d, more ? e : NULL, r);
        if (n + k > sizeof batch / sizeof *batch) {
            rt.consume(batch, n);
            n = 0;
        }
        for (size_t i = 0; i < k; i++) {
            memtap_access *a = &batch[n++];
            memset(a, 0, sizeof *a);
            a->pc = r[i].pc;
            a->addr = r[i].addr;
            a->size = r[i].size;
            a->count = r[i].count;
            a->kind = r[i].kind;
        }
    }
    if (n)
        rt.consume(batch, n);
}

/* Whether memory of region `region` is kept (MEMTAP_ONLY). */
static int kept_region(uint8_t region)
{
    unsigned kind = region == PM_HEAP     ? ONLY_HEAP
                    : region == PM_STATIC ? ONLY_STATIC
                                          : ONLY_STACK;
    return !(rt.drop & kind);
}

/* Whether accesses to addr are kept. */
static int kept(uint64_t addr)
{
    return kept_region(traced_region((uintptr_t)addr));
}

/* Whether accesses to addr are kept, through a thread's cache of spans of
 * memory of one region (a heap arena, a module's data, a stack): a
 * thread's entries stay in a few of them however many pages they touch
 * (a cache of pages' answers missed on every entry of a random walk over
 * 512 KiB, a fifth of a default run's time).  The answers hold while the
 * traced set's regions stay as they were (gen); they were a buffer's
 * before, and finding them again at each buffer, up to 128 MiB of pages
 * read around each address, was a twentieth of xz's default run. */
enum { SPAN_ANSWERS = 8 };
typedef struct span_answers {
    uint64_t lo[SPAN_ANSWERS], len[SPAN_ANSWERS]; /* empty: len 0 */
    uint8_t kept[SPAN_ANSWERS];
    unsigned next;         /* the next to go */
    uint64_t gen;          /* traced_regions_generation() they are of */
    unsigned drop;         /* and rt.drop */
} span_answers;
static __thread span_answers tls_answers __attribute__((tls_model("initial-exec")));

/* The span of c holding addr, found or made: its [*lo, *lo + *len) and
 * whether it is kept. */
static int span_of(span_answers *c, uint64_t addr, uint64_t *lo, uint64_t *len)
{
    unsigned i = 0;
    while (i < SPAN_ANSWERS && addr - c->lo[i] >= c->len[i])
        i++;
    if (i == SPAN_ANSWERS) {
        uintptr_t l, h;
        i = c->next;
        c->next = (c->next + 1) % SPAN_ANSWERS;
        c->kept[i] = (uint8_t)kept_region(traced_region_span((uintptr_t)addr, &l, &h));
        c->lo[i] = l;
        c->len[i] = h - l;
    }
    *lo = c->lo[i];
    *len = c->len[i];
    return c->kept[i];
}

/* The filter of a thread's entries by region (rt.drop): the two spans
 * that answered last (trace_keep's: a loop that reads the heap and writes
 * its stack goes from one to the other at every entry, and searching the
 * thread's answers then was a fifth of sort's default run), then the
 * thread's answers.  An entry stands for its followers too: they share
 * its base register, so its memory. */
static int region_more(trace_keep *k, uint64_t addr)
{
    k->lo[1] = k->lo[0], k->len[1] = k->len[0], k->keep[1] = k->keep[0];
    k->keep[0] = span_of(k->arg, addr, &k->lo[0], &k->len[0]);
    return k->keep[0];
}

static trace_keep region_keep(void)
{
    span_answers *answers = &tls_answers;
    uint64_t gen = traced_regions_generation(); /* before the answers */
    if (answers->gen != gen || answers->drop != rt.drop) {
        memset(answers, 0, sizeof *answers);
        answers->gen = gen;
        answers->drop = rt.drop;
    }
    return (trace_keep){ { 0, 0 }, { 0, 0 }, { 1, 1 }, region_more, answers };
}

/* Moves the entries whose address lies in memory that is kept (rt.drop,
 * the filters) to the front; returns their end.  Entries move only after
 * one is dropped: most buffers keep every entry, and the loop is then a
 * read of each. */
static mt_entry *keep_entries(mt_entry *e, mt_entry *end)
{
    mt_entry *out = e;
    int filtered = filters_on(), by_region = rt.drop != 0;
    trace_keep r = region_keep();
    for (; e < end; e++) {
        if ((by_region && !trace_keep_test(&r, e->addr)) ||
            (filtered && !filters_keep(MEMTAP_EV_LOAD, e->addr, 1, 0)))
            continue;
        if (out != e)
            *out = *e;
        out++;
    }
    return out;
}

/* Hands entries over as records, to a shadow tool.  Not inlined: its
 * batch (14 KiB) must not be on the stack of every flush, which may be a
 * small thread stack's. */
static __attribute__((noinline)) void hand_over_records(const mt_entry *e,
                                                       const mt_entry *end)
{
    enum { BATCH = 256 };
    memtap_record batch[BATCH];
    trace_deferred d;
    d.n = 0;
    size_t n = 0;
    for (int more = 1; more; e += more) {
        more = e < end;
        if (n + TRACE_EXPAND_MAX > BATCH) {
            tracer_record_accesses(batch, n);
            n = 0;
        }
        n += entry_records(&d, more ? e : NULL, &batch[n]);
    }
    tracer_record_accesses(batch, n);
}

/* Hands the entries that are kept over: to the tracer, which filters
 * them by region as it packs them (a second pass over the buffer, before,
 * cost gzip -9's default run a twentieth of its CPU), to a shadow tool or
 * to the user's consumer. */
static void hand_over_entries(mt_entry *e, mt_entry *end)
{
    if (atomic_load(&rt.closed))
        return;
    trace_keep r;
    int by_tracer = rt.drop && !filters_on() && !rt.consume;
    if (by_tracer)
        r = region_keep();
    else if (rt.drop || filters_on())
        end = keep_entries(e, end);
    if (rt.consume) {
        consume_entries(e, end);
    } else if (!tracer_append_entries((const trace_entry *)e,
                                      (const trace_entry *)end,
                                      by_tracer ? &r : NULL)) {
        if (by_tracer) /* (a shadow tool: nothing taken) */
            end = keep_entries(e, end);
        hand_over_records(e, end);
    }
}

/* The calling thread's log: its own state, or the one its own-work mode
 * set aside (meanwhile the trampolines log into the scratch buffer). */
static rt_tls *real_log(void)
{
    return tls_own ? &tls_saved : &tls_log;
}

static void to_scratch(void)
{
    tls_log.cursor = rt.scratch_end
                         ? (uint64_t)(uintptr_t)(rt.scratch_end - SCRATCH)
                         : 0;
}

/* A thread's entry buffer (ENTRIES), or NULL. */
static mt_entry *map_buffer(void)
{
    uint8_t *m = raw_map(2 * MT_BUFFER_ALIGN);
    if (!m)
        return NULL;
    uintptr_t at = ((uintptr_t)m + MT_BUFFER_ALIGN - 1) &
                   ~(uintptr_t)(MT_BUFFER_ALIGN - 1);
    if (at > (uintptr_t)m)
        raw_unmap(m, at - (uintptr_t)m);
    if ((uintptr_t)m + MT_BUFFER_ALIGN > at)
        raw_unmap((void *)(at + MT_BUFFER_ALIGN),
                     (uintptr_t)m + MT_BUFFER_ALIGN - at);
    return (mt_entry *)at + 1;
}

static void unmap_buffer(mt_entry *base)
{
    if (base)
        raw_unmap(base - 1, MT_BUFFER_ALIGN);
}

/* Hands the calling thread's entries over and empties its buffer (full:
 * up to where no record is still due, the rest kept).  What memtap's own
 * work logs meanwhile (when libc itself is rewritten) goes to the scratch
 * buffer and is dropped. */
static void drain(int full)
{
    if (tls_flushing) { /* called from inside a drain: memtap's own */
        to_scratch();
        return;
    }
    defer_enter(); /* a program handler would log into the scratch */
    tls_flushing = 1;
    rt_tls *real = real_log();
    mt_entry *base = tls_base;
    mt_entry *end = base ? (mt_entry *)(uintptr_t)real->cursor : NULL;
    to_scratch();
    if (!base) {
        base = map_buffer();
        tls_base = base;
        end = base;
    }
    mt_entry tail[TRACE_WINDOW_ENTRIES];
    size_t ntail = 0;
    if (base && end >= base && end <= base + ENTRIES && !rt.discard) {
        if (full) { /* cut where no record is still due */
            trace_sites sites = { rt.tabs, atomic_load(&rt.nmods) };
            size_t n = (size_t)(end - base);
            ntail = n - trace_window_start(&sites, (const trace_entry *)base,
                                           n);
            end -= ntail;
            memcpy(tail, end, ntail * sizeof *tail);
        }
        atomic_fetch_add_explicit(&rt.entries, (uint64_t)(end - base),
                                  memory_order_relaxed);
        hand_over_entries(base, end);
    }
    if (base && ntail) /* the cut's tail begins the buffer again */
        memcpy(base, tail, ntail * sizeof *tail);
    /* NULL: no room, as when full (rewritten_flush) */
    real->cursor = (uint64_t)(uintptr_t)(base ? base + ntail : NULL);
    if (tls_own)
        to_scratch();
    tls_flushing = 0;
    defer_leave();
}

/* The flush function the flush stubs call (with everything saved);
 * memtap's own mode (tracer_internal_enter) sets the full buffer aside
 * first.  A log left with no room gets the scratch buffer: the trampoline
 * retries until there is room, so it must find some.  That is after the
 * thread's exit hook (its exit path goes nowhere, by design), or when there was no
 * memory for a buffer: then the scratch's entries are counted lost (all
 * 256 each time, a few more than may be). */
void rewritten_flush(void);
void rewritten_flush(void)
{
    tracer_internal_enter();
    drain(1);
    tracer_internal_leave();
    if ((tls_log.cursor & (MT_BUFFER_ALIGN - 1)) == 0) { /* as a trampoline sees */
        if (!tls_flushing)
            tracer_lose(SCRATCH);
        to_scratch();
    }
}

/* What the flush stubs call, with the flags and general registers saved
 * on the program's stack and rbx holding its stack pointer: rewritten_flush
 * on memtap's own stack (own_stack_for), the extended state saved around
 * it (the runtime's C code may change vector registers), all of it a
 * critical section (defer.c): a program handler that logs runs after
 * the flush, never inside it, where the thread's buffers are changing
 * hands; one that comes on the way in (rewritten_flush_coming) waits
 * for the section's end too. */
void rewritten_flush_entry(void);
extern const char rewritten_flush_deferring[];
__asm__(".text\n"
        ".type rewritten_flush_entry, @function\n"
        "rewritten_flush_entry:\n"
        "  endbr64\n"
        "  push %rbp\n"
        "  mov %rsp, %rbp\n"
        "  and $-16, %rsp\n"
        OWN_FLAGS_CLEAR_ASM
        "  call defer_enter\n"
        "rewritten_flush_deferring:\n"
        "  mov %rsp, %rdi\n"
        "  call own_stack_for\n"
        "  mov %rax, %rsp\n"
        "  and $-64, %rsp\n"
        "  sub $4096, %rsp\n"
        "  xor %eax, %eax\n"
        "  mov %rax, 512(%rsp)\n  mov %rax, 520(%rsp)\n"
        "  mov %rax, 528(%rsp)\n  mov %rax, 536(%rsp)\n"
        "  mov %rax, 544(%rsp)\n  mov %rax, 552(%rsp)\n"
        "  mov %rax, 560(%rsp)\n  mov %rax, 568(%rsp)\n"
        "  mov $0xe7, %eax\n"
        "  xor %edx, %edx\n"
        "  xsave64 (%rsp)\n"
        "  call rewritten_flush\n"
        "  call defer_leave\n"
        "  mov $0xe7, %eax\n"
        "  xor %edx, %edx\n"
        "  xrstor64 (%rsp)\n"
        "  mov %rbp, %rsp\n"
        "  pop %rbp\n"
        "  ret\n"
        ".size rewritten_flush_entry, .-rewritten_flush_entry\n");

/* The switch between the thread's log and the scratch buffer is one step
 * for a program handler (rewritten_handler_enter): no signal comes
 * between the count and the cursors. */
void rewritten_own_begin(void)
{
    defer_enter();
    if (tls_own++ == 0) {
        tls_saved = tls_log;
        to_scratch();
    }
    defer_leave();
}

void rewritten_own_end(void)
{
    defer_enter();
    if (tls_own > 0 && --tls_own == 0)
        tls_log = tls_saved;
    defer_leave();
}

static void take_fault_signals(void);

void rewritten_start(unsigned keep, int open)
{
    if (!fault_enabled())
        take_fault_signals();
    rt.drop = ONLY_ALL & ~keep;
    atomic_store(&rt.closed, !open);
}

static void rewritten_sync(void);

void rewritten_set_active(int on)
{
    if (atomic_load(&rt.closed) == !on)
        return;
    rewritten_sync(); /* the calling thread's accesses before the mark */
    atomic_store(&rt.closed, !on);
}

int rewritten_recording(void)
{
    return atomic_load(&rt.nmods) > 0 && !atomic_load(&rt.closed) &&
           !tls_own;
}

static void rewritten_sync(void)
{
    if (tls_base && !tls_flushing &&
        real_log()->cursor != (uint64_t)(uintptr_t)tls_base)
        drain(0);
}

static void rewritten_thread_exit(void)
{
    rewritten_sync();
    unmap_buffer(tls_base);
    tls_base = NULL;
    /* later entries of this thread (its exit path) go nowhere */
    to_scratch();
    tls_saved = tls_log;
    tls_flushing = 1;
}

static void rewritten_after_fork_child(void)
{
    /* the entries in the buffer and the counts so far are the parent's */
    if (tls_base)
        real_log()->cursor = (uint64_t)(uintptr_t)tls_base;
    uint32_t nmods = atomic_load(&rt.nmods);
    for (uint32_t m = 0; m < nmods; m++)
        if (rt.mods[m].counters)
            memset(rt.mods[m].counters, 0, rt.mods[m].nblocks * sizeof(uint64_t));
}

static void rewritten_finish(void)
{
    rewritten_sync();
    uint32_t nmods = atomic_load(&rt.nmods);
    for (uint32_t m = 0; m < nmods; m++) {
        const rt_module *mod = &rt.mods[m];
        for (uint32_t b = 0; mod->counters && b < mod->nblocks; b++)
            if (mod->counters[b])
                tracer_record(MEMTAP_EV_BLOCK_COUNT, 0, mod->bias + mod->blocks[b],
                            mod->blocks[b], 0, mod->source_id, mod->counters[b]);
    }
    if (rt.consume_end) {
        void (*end)(void) = rt.consume_end;
        rt.consume_end = NULL;
        end();
    }
}

/* ---- int3 sites ---- */

static const mt_trap *find_trap(const rt_module *mod, uint64_t pc)
{
    size_t lo = 0, hi = mod->ntraps;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (mod->traps[mid].pc < pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < mod->ntraps && mod->traps[lo].pc == pc ? &mod->traps[lo] : NULL;
}

/* An element of `size` bytes at addr, as the instruction will read it. */
static uint64_t element(uint64_t addr, unsigned size)
{
    switch (size) {
    case 1: return *(const volatile uint8_t *)addr;
    case 2: return *(const volatile uint16_t *)addr;
    case 4: return *(const volatile uint32_t *)addr;
    default: return *(const volatile uint64_t *)addr;
    }
}

/* cmps and scas: the loads of each element they compare, in the order
 * the instruction makes them (cmps: [rsi], then [rdi]), up to where the
 * repeat prefix stops on the data (read here before the instruction
 * reads it: an element that faults would fault the instruction there). */
static void compare_loads(const mt_trap *t, const ucontext_t *uc,
                          uint64_t pc)
{
    const greg_t *g = uc->uc_mcontext.gregs;
    uint64_t n = t->rep ? (uint64_t)g[REG_RCX] : 1;
    int64_t step = (g[REG_EFL] & 0x400) ? -(int64_t)t->size : t->size;
    uint64_t src = (uint64_t)g[REG_RSI], dst = (uint64_t)g[REG_RDI];
    uint64_t mask = t->size == 8 ? ~0ull : (1ull << (8 * t->size)) - 1;
    uint64_t acc = (uint64_t)g[REG_RAX] & mask;
    rewritten_sync(); /* the thread's logged accesses come first */
    for (uint64_t i = 0; i < n; i++, src += step, dst += step) {
        uint64_t a = acc;
        if (t->string == MT_STRING_CMPS) {
            a = element(src, t->size);
            if (kept(src))
                tracer_record(MEMTAP_EV_LOAD, 0, pc, src, t->size, 0, 0);
        }
        uint64_t b = element(dst, t->size);
        if (kept(dst))
            tracer_record(MEMTAP_EV_LOAD, 0, pc, dst, t->size, 0, 0);
        if ((t->rep == MT_REP_E && a != b) || (t->rep == MT_REP_NE && a == b))
            break;
    }
}

/* A string operation about to run, from its registers: rcx elements (one
 * without rep) of `size` bytes from rdi (stores) and rsi (loads),
 * downwards when the direction flag is set (strings.c records it). */
static void string_event(const rt_module *mod, const mt_trap *t,
                         const ucontext_t *uc)
{
    if (tls_own || tls_flushing || tracer_internal() ||
        atomic_load(&rt.closed))
        return;
    if (t->string == MT_STRING_CMPS || t->string == MT_STRING_SCAS) {
        compare_loads(t, uc, mod->bias + t->insn);
        return;
    }
    const greg_t *g = uc->uc_mcontext.gregs;
    string_op op = {
        .kind = t->string == MT_STRING_MOVS   ? MEMTAP_EV_COPY
                : t->string == MT_STRING_STOS ? MEMTAP_EV_BLOCK_STORE
                                              : MEMTAP_EV_BLOCK_FETCH,
        .size = t->size,
        .down = (g[REG_EFL] & 0x400) != 0,
        .pc = mod->bias + t->insn,
        .dst = (uint64_t)g[REG_RDI],
        .src = (uint64_t)g[REG_RSI],
        .n = t->rep ? (uint64_t)g[REG_RCX] : 1,
    };
    if (strings_per_element())
        rewritten_sync(); /* the thread's logged accesses come first */
    strings_record(&op, kept);
}

int rewritten_trap(ucontext_t *uc)
{
    uint64_t pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP] - 1; /* after int3 */
    uint32_t nmods = atomic_load(&rt.nmods);
    for (uint32_t m = 0; m < nmods; m++) {
        const rt_module *mod = &rt.mods[m];
        const mt_trap *t = mod->ntraps && pc - mod->bias < mod->span
                               ? find_trap(mod, pc - mod->bias)
                               : NULL;
        if (t) {
            if (t->string)
                string_event(mod, t, uc);
            else
                atomic_fetch_add_explicit(&rt.traps_hit, 1,
                                          memory_order_relaxed);
            if (t->past_leader)
                atomic_fetch_add_explicit(&rt.past_leader, 1,
                                          memory_order_relaxed);
            uc->uc_mcontext.gregs[REG_RIP] = (greg_t)(mod->bias + t->tramp);
            return 1;
        }
    }
    return 0;
}

static void on_trap(int sig, siginfo_t *si, void *uc)
{
    own_flags();
    if (si->si_code != SI_KERNEL || !rewritten_trap(uc)) {
        if (rt.debug_traps) {
            char b[64];
            fmt_buf f = { b, 0, sizeof b };
            fmt_str(&f, "memtap: SIGTRAP at ");
            fmt_u64(&f, (uint64_t)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP]);
            fmt_char(&f, '\n');
            raw_say(b, f.len);
        }
        sigtable_chain(sig, si, uc);
    }
}

/* The synchronous fault signals the static engine watches (a block
 * operation's own work may fault into a program handler that never
 * returns to it). */
static const int fault_signals[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL };

/* A fault during memtap's own work on the program's behalf (memcpy on a
 * bad pointer): the program's handler may longjmp out of it, so the
 * thread's own mode ends here, before the handler runs. */
static void on_fault(int sig, siginfo_t *si, void *uc)
{
    own_flags();
    if (tls_own > 0) {
        tls_own = 0;
        tls_log = tls_saved;
    }
    fault_own_reset();
    sigtable_chain(sig, si, uc);
}

extern int __sigaction(int, const struct sigaction *, struct sigaction *);

/* SIGTRAP goes to on_trap, unless the fault engine has it (its handler
 * asks rewritten_trap first). */
static int take_sigtrap(void)
{
    if (rt.trap_handler || fault_enabled())
        return 0;
    struct sigaction sa, had;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_trap;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER | SA_RESTART;
    if (__sigaction(SIGTRAP, &sa, &had) != 0)
        return -1;
    sigtable_adopt(SIGTRAP, &had); /* a library dlopened late: keep the
                                     program's handler */
    own_signals_claim(SIGTRAP);
    rt.trap_handler = 1;
    return 0;
}

/* The static engine takes the synchronous fault signals (on_fault), and
 * chains them to the program's or memtap's own dispositions. */
static void take_fault_signals(void)
{
    for (size_t i = 0; i < sizeof fault_signals / sizeof *fault_signals; i++) {
        struct sigaction sa, had;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_fault;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
        if (__sigaction(fault_signals[i], &sa, &had) == 0)
            sigtable_adopt(fault_signals[i], &had);
        own_signals_claim(fault_signals[i]);
    }
    rt.fault_handlers = 1;
}

static int64_t tls_offset(const void *p)
{
    return (int64_t)((uintptr_t)p - (uintptr_t)__builtin_thread_pointer());
}

static int set_prot(uint64_t start, uint64_t end, int prot)
{
    start &= ~(uint64_t)(PAGE - 1);
    end = (end + PAGE - 1) & ~(uint64_t)(PAGE - 1);
    return (int)raw_syscall3(SYS_mprotect, start, end - start, prot);
}

static void put32(uint64_t at, int64_t v)
{
    int32_t d = (int32_t)v;
    memcpy((void *)(uintptr_t)at, &d, 4);
}

/* The executable segment of info holding link-time address pc, as
 * [*start, *end) at run time and its protection; 0 when none does. */
static int exec_segment(const struct dl_phdr_info *info, uint64_t pc,
                        uint64_t *start, uint64_t *end, int *prot)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) ||
            pc - ph->p_vaddr >= ph->p_memsz)
            continue;
        *start = info->dlpi_addr + ph->p_vaddr;
        *end = *start + ph->p_memsz;
        *prot = PROT_EXEC | (ph->p_flags & PF_R ? PROT_READ : 0) |
                (ph->p_flags & PF_W ? PROT_WRITE : 0);
        return 1;
    }
    return 0;
}

/* Writes the int3 of each trap site, the traps of one executable segment
 * in a row at a time: its pages from the lowest trap's to the highest's
 * writable for a moment, and executable meanwhile (other threads may be
 * running them).  Two system calls a segment, not two a page: libc's 193
 * pages of traps had cost 386 (a tenth of `memtap run -- /bin/true`).  A
 * trap no segment holds gets its page alone. */
static void write_traps(const rt_module *mod, const struct dl_phdr_info *info)
{
    for (uint32_t i = 0; i < mod->ntraps;) {
        uint64_t lo = mod->bias + mod->traps[i].pc, hi = lo;
        uint64_t start, end;
        int prot;
        if (!exec_segment(info, mod->traps[i].pc, &start, &end, &prot)) {
            start = lo & ~(uint64_t)(PAGE - 1);
            end = start + PAGE;
            prot = PROT_READ | PROT_EXEC;
        }
        uint32_t j = i + 1;
        for (; j < mod->ntraps; j++) {
            uint64_t pc = mod->bias + mod->traps[j].pc;
            if (pc < start || pc >= end)
                break;
            lo = pc < lo ? pc : lo;
            hi = pc > hi ? pc : hi;
        }
        if (set_prot(lo, hi + 1, prot | PROT_WRITE) == 0) {
            for (uint32_t k = i; k < j; k++)
                if (!mod->traps[k].jumped)
                    *(volatile uint8_t *)(uintptr_t)(mod->bias + mod->traps[k].pc) = 0xcc;
            set_prot(lo, hi + 1, prot);
        }
        i = j;
    }
}


/* A rewritten module whose code hook() does not turn on logs nothing:
 * say so, once, and count it (the trace's INFO rewritten_refused, which
 * the summary and readers report as incomplete). */
static void refuse(const char *name, const mt_rewrite_header *h,
                   const char *why)
{
    uint32_t n = atomic_load(&rt.nrefused);
    if (n < MAX_MODULES)
        rt.refused[n] = (uint64_t)(uintptr_t)h;
    atomic_store(&rt.nrefused, n + 1);
    const char *msg[] = { "memtap: ", name && *name ? name : "the program",
                          ": ", why, "; its accesses are not in the trace\n",
                          NULL };
    raw_say_parts(msg);
}

/* Whether count items of size bytes from offset off lie inside h's
 * segment (the tables the header points at, the bytes hook() patches). */
static int in_segment(const mt_rewrite_header *h, uint64_t off, uint64_t count,
                      uint64_t size)
{
    return off <= h->segment_size && count <= (h->segment_size - off) / size;
}

/* Whether the header's check-once slots all lie in the segment at `at`,
 * name sites of its table in the order of their pcs (so that
 * rewritten_check_passed can search them), and are `jmp .+2` (eb 00) as
 * the rewriter left them. */
static int valid_checks(const mt_rewrite_header *h, uint64_t at)
{
    if (!h->nchecks || !in_segment(h, h->checks, h->nchecks, sizeof(mt_check)))
        return 0;
    const mt_check *c = (const mt_check *)(uintptr_t)(at + h->checks);
    const mt_site *sites = (const mt_site *)(uintptr_t)(at + h->sites);
    for (uint32_t k = 0; k < h->nchecks; k++) {
        const uint8_t *slot = (const uint8_t *)(uintptr_t)(at + c[k].slot);
        if (c[k].site >= h->nsites || c[k].skip > 127 ||
            c[k].slot + 2ull > h->segment_size || slot[0] != 0xeb ||
            slot[1] != 0 ||
            (k && sites[c[k].site].pc < sites[c[k - 1].site].pc))
            return 0;
    }
    return 1;
}

/* When uninit checks once (MEMTAP_TOOL_CHECK_ONCE), the hooked segment
 * at [at, end) is made writable too, so that a passed check's slot is one
 * byte written from any context, no lock and no system call (other threads
 * run the page meanwhile), and its slots are searchable from then on. */
static void keep_checks(rt_module *mod, const mt_rewrite_header *h,
                        uint64_t at, uint64_t end)
{
    if (!rt.check_once || !valid_checks(h, at) ||
        set_prot(at, end, PROT_READ | PROT_WRITE | PROT_EXEC) != 0)
        return;
    mod->checks = (const mt_check *)(uintptr_t)(at + h->checks);
    __atomic_store_n(&mod->nchecks, h->nchecks, __ATOMIC_RELEASE);
}

/* Adds up what the bypass rules left out of the hooked modules. */
static void add_bypassed(const mt_rewrite_header *h)
{
    uint32_t n = h->nbypass < 8 ? h->nbypass : 8;
    for (uint32_t k = 0; k < n; k++)
        rt.bypassed[k] += h->bypassed[k];
    if (n > rt.nbypass)
        rt.nbypass = n;
}

void rewritten_check_passed(uint64_t pc)
{
    uint32_t m = atomic_load(&rt.nmods);
    for (uint32_t i = 0; i < m; i++) {
        const rt_module *mod = &rt.mods[i];
        const mt_site *sites = rt.tabs[i].sites;
        uint64_t link = pc - mod->bias;
        uint32_t n = __atomic_load_n(&mod->nchecks, __ATOMIC_ACQUIRE);
        if (!n || link >= mod->span)
            continue;
        uint32_t lo = 0, hi = n; /* by pc: valid_checks */
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (sites[mod->checks[mid].site].pc < link)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (; lo < n && sites[mod->checks[lo].site].pc == link; lo++) {
            const mt_check *c = &mod->checks[lo];
            uint8_t *disp = (uint8_t *)(uintptr_t)(mod->header + c->slot + 1);
            uint8_t zero = 0;
            if (__atomic_compare_exchange_n(disp, &zero, (uint8_t)c->skip, 0,
                                            __ATOMIC_RELAXED,
                                            __ATOMIC_RELAXED))
                atomic_fetch_add(&rt.checks_removed, 1);
        }
    }
}

/* Gives back what hook() took for a module it does not turn on. */
static void release_slot(rt_module *mod, const mt_rewrite_header *h)
{
    if (mod->counters)
        raw_unmap(mod->counters, 2 * h->nblocks * sizeof(uint64_t));
    memset(mod, 0, sizeof *mod);
}

/* Widens [*lo, *hi) by the len bytes at offset off of h's segment; 0
 * when they lie outside it. */
static int patch_at(const mt_rewrite_header *h, uint64_t off, uint64_t len,
                    uint64_t *lo, uint64_t *hi)
{
    if (!in_segment(h, off, len, 1))
        return 0;
    *lo = off < *lo ? off : *lo;
    *hi = off + len > *hi ? off + len : *hi;
    return 1;
}

/* The bytes of h's segment that turn_on() writes, as offsets [*lo, *hi):
 * the slots and the count stub's first byte, so that only their page or
 * two turn writable (the whole segment, libc's 3.5 MB, had cost two
 * system calls that changed every page the site table's reading had
 * brought in).  0 when one lies outside the segment. */
static int patch_span(const mt_rewrite_header *h, int counters, uint64_t *lo,
                      uint64_t *hi)
{
    int ok = patch_at(h, h->tag_slot, 4, lo, hi) &&
             patch_at(h, h->flush_slot, 8, lo, hi) &&
             patch_at(h, h->cursor_slot, 8, lo, hi);
    return ok && (!counters || (patch_at(h, h->counters_slot, 8, lo, hi) &&
                                patch_at(h, h->count_stub, 1, lo, hi)));
}

/* Whether the header's log shape is one rewritten_handler_enter can go
 * by: its steps and fields inside its bytes, in their order. */
static int valid_shape(const mt_log_shape *sh)
{
    if (!sh->len || sh->len > MT_LOG_BYTES || sh->bumped >= 64 ||
        sh->rdx_kept >= sh->bumped || sh->bumped >= sh->len ||
        sh->full <= sh->bumped || sh->full_call <= sh->full ||
        sh->full_call >= sh->len ||
        sh->nfields > sizeof sh->fields || !(sh->starts & 1))
        return 0;
    for (unsigned k = 0; k < sh->nfields; k++)
        if (sh->fields[k] + 4u > sh->len)
            return 0;
    return 1;
}

/* Whether the bytes at p are a copy of the log sequence sh describes. */
static int is_log_copy(const mt_log_shape *sh, const uint8_t *p)
{
    for (unsigned i = 0; i < sh->len; i++) {
        int field = 0; /* (no C library here: a signal handler's) */
        for (unsigned k = 0; k < sh->nfields && !field; k++)
            field = i - sh->fields[k] < 4;
        if (!field && p[i] != sh->bytes[i])
            return 0;
    }
    return 1;
}

/* The start of the copy of sh that pc is at offset o of, in the segment
 * [lo, hi), or 0. */
static uint64_t log_copy_at(const mt_log_shape *sh, uint64_t lo, uint64_t hi,
                            uint64_t pc, unsigned o)
{
    uint64_t start = pc - o;
    return pc - lo >= o && start + sh->len <= hi &&
                   is_log_copy(sh, (const uint8_t *)(uintptr_t)start)
               ? start
               : 0;
}

/* The module whose segment holds pc and whose log sequence is described,
 * or NULL. */
static const rt_module *log_module_at(uint64_t pc)
{
    uint32_t nmods = atomic_load(&rt.nmods);
    for (uint32_t m = 0; m < nmods; m++)
        if (rt.mods[m].log && pc - rt.mods[m].header < rt.mods[m].size)
            return &rt.mods[m];
    return NULL;
}

int rewritten_flush_coming(const ucontext_t *uc)
{
    uint64_t pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
    uint64_t entry = (uint64_t)(uintptr_t)rewritten_flush_entry;
    if (pc - entry < (uint64_t)(uintptr_t)rewritten_flush_deferring - entry)
        return 1;
    const rt_module *mod = log_module_at(pc);
    if (!mod)
        return 0;
    const mt_rewrite_header *h =
        (const mt_rewrite_header *)(uintptr_t)mod->header;
    uint64_t hi = mod->header + mod->size;
    return (pc >= mod->header + h->stub &&
            pc < mod->header + h->stub_call_end) ||
           log_copy_at(mod->log, mod->header, hi, pc, mod->log->full) ||
           log_copy_at(mod->log, mod->header, hi, pc, mod->log->full_call);
}

/* A log sequence uc interrupted before its commit goes back to its
 * start (see mt_log_shape). */
static void restart_log(ucontext_t *uc)
{
    greg_t *g = uc->uc_mcontext.gregs;
    uint64_t pc = (uint64_t)g[REG_RIP];
    const rt_module *mod = log_module_at(pc);
    if (!mod)
        return;
    const mt_log_shape *sh = mod->log;
    for (unsigned o = 1; o <= sh->bumped; o++) {
        uint64_t start = sh->starts >> o & 1
                             ? log_copy_at(sh, mod->header,
                                           mod->header + mod->size, pc, o)
                             : 0;
        if (!start)
            continue;
        if (o >= sh->rdx_kept) { /* rdx is gone: the entry holds it */
            const mt_entry *e = (const mt_entry *)(uintptr_t)g[REG_RCX];
            g[REG_RDX] = (greg_t)(o < sh->bumped ? e : e - 1)->addr;
        }
        g[REG_RIP] = (greg_t)start;
        atomic_fetch_add_explicit(&rt.restarts, 1, memory_order_relaxed);
        return;
    }
}

typedef struct rewritten_bracket {
    int own;
    uint64_t scratch;
} rewritten_bracket;

static void handler_enter(void *state, ucontext_t *uc)
{
    rewritten_bracket *b = state;
    restart_log(uc);
    b->own = tls_own;
    b->scratch = tls_log.cursor;
    if (tls_own) { /* the handler's accesses are the program's */
        tls_log = tls_saved;
        tls_own = 0;
    }
}

static void handler_leave(const void *state)
{
    const rewritten_bracket *b = state;
    if (b->own) {
        tls_saved = tls_log;
        tls_log.cursor = b->scratch;
        tls_own = b->own;
    }
}

const sigtable_bracket rewritten_handler_bracket = { handler_enter, handler_leave };

/* Fills in the slots of one rewritten module as tag m, turning it on;
 * returns NULL, or why it is not on. */
static const char *turn_on(const struct dl_phdr_info *info,
                           const mt_rewrite_header *h, uint32_t m)
{
    uint64_t bias = info->dlpi_addr;
    if (h->version != MT_REWRITE_VERSION)
        return "rewritten by another version of memtap instrument (instrument "
               "it again)";
    if (m == MAX_MODULES)
        return "more rewritten modules than memtap can follow";
    if (!in_segment(h, h->sites, h->nsites, sizeof(mt_site)))
        return "its rewrite header is damaged";
    if (!rt.scratch_end) { /* before any module is on (rt.lock held) */
        mt_entry *scratch = map_buffer();
        if (!scratch)
            return "no memory for its entry buffers";
        rt.scratch_end = scratch + ENTRIES;
    }
    uint64_t at = (uint64_t)(uintptr_t)h;
    uint64_t end = at + h->segment_size;
    rt_module *mod = &rt.mods[m];
    mod->bias = bias;
    mod->header = at;
    mod->source_id = h->source_id;
    if (h->nblocks) {
        mod->counters = raw_map(2 * h->nblocks * sizeof(uint64_t));
        if (!mod->counters) {
            release_slot(mod, h);
            return "no memory for its block counters";
        }
        memcpy(mod->counters + h->nblocks, (const void *)(uintptr_t)(at + h->blocks),
               h->nblocks * sizeof(uint64_t));
        mod->blocks = mod->counters + h->nblocks;
        mod->nblocks = h->nblocks;
    }
    if (h->ntraps && take_sigtrap() != 0) {
        release_slot(mod, h); /* not hooked: the slot stays free */
        return "SIGTRAP cannot be taken for its int3 sites";
    }
    /* the trace knows the tag from here on (while the segment is writable
     * below, nothing may call into it: no libc) */
    const mt_site *sites = (const mt_site *)(uintptr_t)(at + h->sites);
    int framed = h->sites_z_size &&
                 in_segment(h, h->sites_z, h->sites_z_size, 1);
    int recorded = h->records && in_segment(h, h->records, h->nsites, 1);
    if (tracer_add_sites(m, bias, sites, h->nsites,
                         framed ? (const uint8_t *)(uintptr_t)(at + h->sites_z)
                                : NULL,
                         framed ? h->sites_z_size : 0,
                         recorded ? (const uint8_t *)(uintptr_t)(at + h->records)
                                  : NULL) != 0) {
        release_slot(mod, h); /* not hooked: the slot stays free */
        return "its sites cannot be described in the trace";
    }
    rt.tabs[m] = (trace_site_table){ bias, sites, h->nsites, NULL };
    uint64_t lo = UINT64_MAX, hi = 0;
    if (!patch_span(h, mod->counters != NULL, &lo, &hi) ||
        set_prot(at + lo, at + hi, PROT_READ | PROT_WRITE) != 0) {
        /* described to the trace but never on: the tag stays taken */
        release_slot(mod, h);
        rt.tabs[m].nsites = 0;
        mod->header = at;
        atomic_store(&rt.nmods, m + 1);
        return "its rewritten code cannot be turned on";
    }
    put32(at + h->tag_slot, (int64_t)m << MT_SITE_BITS);
    void (*flush)(void) = rewritten_flush_entry;
    memcpy((void *)(uintptr_t)(at + h->flush_slot), &flush, sizeof flush);
    /* last: the trampolines read it first, the rest only once it is on */
    atomic_store_explicit((_Atomic int64_t *)(uintptr_t)(at + h->cursor_slot),
                          tls_offset(&tls_log.cursor), memory_order_release);
    if (mod->counters) {
        memcpy((void *)(uintptr_t)(at + h->counters_slot), &mod->counters,
               sizeof mod->counters);
        *(volatile uint8_t *)(uintptr_t)(at + h->count_stub) = 0x90;
    }
    set_prot(at + lo, at + hi, PROT_READ | PROT_EXEC);
    add_bypassed(h);
    mod->span = h->segment_vaddr + h->segment_size;
    mod->size = h->segment_size;
    mod->log = valid_shape(&h->log) ? &h->log : NULL;
    /* the module's site table is live before its first int3 is */
    mod->traps = (const mt_trap *)(uintptr_t)(at + h->traps);
    mod->ntraps = h->ntraps;
    atomic_store(&rt.nmods, m + 1);
    write_traps(mod, info);
    /* after the traps: write_traps leaves the pages it writes (a string
     * operation's int3 may be in a trampoline) read + execute */
    keep_checks(mod, h, at, end);
    return NULL;
}

/* Turns on a rewritten module once: a module on, or turned down (said
 * and counted once), is not tried again. */
static void hook(const struct dl_phdr_info *info, const mt_rewrite_header *h)
{
    uint64_t at = (uint64_t)(uintptr_t)h;
    uint32_t m = atomic_load(&rt.nmods), n = atomic_load(&rt.nrefused);
    for (uint32_t i = 0; i < m; i++)
        if (rt.mods[i].header == at) {
            rt.seen[i] = 1;
            return;
        }
    for (uint32_t i = 0; i < n && i < MAX_MODULES; i++)
        if (rt.refused[i] == at)
            return;
    const char *why = turn_on(info, h, m);
    if (why)
        refuse(info->dlpi_name, h, why);
}

const mt_rewrite_header *rewritten_header(const struct dl_phdr_info *info)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) ||
            ph->p_memsz < sizeof(mt_rewrite_header))
            continue;
        const mt_rewrite_header *h =
            (const mt_rewrite_header *)(uintptr_t)(info->dlpi_addr + ph->p_vaddr);
        if (memcmp(h->magic, MT_REWRITE_MAGIC, sizeof h->magic) == 0 &&
            h->segment_vaddr == ph->p_vaddr && h->segment_size <= ph->p_memsz)
            return h;
    }
    return NULL;
}

static int find_rewritten(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    (void)arg;
    const mt_rewrite_header *h = rewritten_header(info);
    if (h)
        hook(info, h);
    return 0;
}

/* Module m was unloaded (dlclose): nothing of its memory is read again
 * (its int3 sites and checks, guarded by their counts, its log sequence
 * and sites; an entry of its still in a buffer then stands for no
 * record), and a module loaded at its address later is turned on anew.
 * Its counters and their blocks are memtap's and stay. */
static void forget(uint32_t m)
{
    rt_module *mod = &rt.mods[m];
    __atomic_store_n(&mod->ntraps, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&mod->nchecks, 0, __ATOMIC_RELEASE);
    mod->log = NULL;
    mod->size = mod->span = 0;
    mod->header = 0;
    rt.tabs[m].nsites = 0;
}

/* MEMTAP_CONSUMER: the user's shared object, loaded once. */
static void load_consumer(void)
{
    static int tried;
    const char *path = config()->consumer;
    if (tried || !*path)
        return;
    tried = 1;
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    void *fn = lib ? dlsym(lib, "memtap_consume") : NULL;
    if (!fn) {
        const char *why = dlerror();
        const char *msg[] = { "memtap: consumer ", path, ": ",
                              why ? why : "no memtap_consume",
                              "; writing the trace instead\n", NULL };
        raw_say_parts(msg);
        return;
    }
    rt.consume_end = (void (*)(void))dlsym(lib, "memtap_consume_end");
    rt.consume = (void (*)(const memtap_access *, size_t))fn;
}

void rewritten_scan(void)
{
    if (!tracer_enabled())
        return;
    load_consumer(); /* its dlopen comes back here: before the lock */
    spin_acquire(&rt.lock);
    rt.discard = config()->rewrite_discard;
    rt.debug_traps = config()->debug_traps;
    rt.check_once = config()->check_once;
    uint32_t had = atomic_load(&rt.nmods);
    memset(rt.seen, 0, sizeof rt.seen);
    dl_iterate_phdr(find_rewritten, NULL);
    for (uint32_t m = 0; m < had; m++)
        if (!rt.seen[m] && rt.mods[m].header)
            forget(m);
    spin_release(&rt.lock);
}

void rewritten_end_stats(fmt_buf *b)
{
    uint32_t nmods = atomic_load(&rt.nmods);
    if (!nmods)
        return;
    fmt_str(b, "rewritten_modules=");
    fmt_u64(b, nmods);
    fmt_str(b, "\nrewritten_refused=");
    fmt_u64(b, atomic_load(&rt.nrefused));
    fmt_str(b, "\nrewritten_traps_hit=");
    fmt_u64(b, atomic_load(&rt.traps_hit));
    fmt_str(b, "\nrewritten_past_leader=");
    fmt_u64(b, atomic_load(&rt.past_leader));
    fmt_str(b, "\nrewritten_restarts=");
    fmt_u64(b, atomic_load(&rt.restarts));
    fmt_str(b, "\nrewritten_entries=");
    fmt_u64(b, atomic_load(&rt.entries));
    fmt_str(b, "\nrewritten_checks_removed=");
    fmt_u64(b, atomic_load(&rt.checks_removed));
    fmt_str(b, "\nrewritten_bypassed=");
    for (uint32_t k = 0; k < rt.nbypass; k++) {
        if (k)
            fmt_char(b, ' ');
        fmt_u64(b, rt.bypassed[k]);
    }
    fmt_char(b, '\n');
}

int rewritten_modules(void) { return (int)atomic_load(&rt.nmods); }

const tracer_client rewritten_client = {
    .sync = rewritten_sync,
    .thread_exit = rewritten_thread_exit,
    .after_fork_child = rewritten_after_fork_child,
    .finish = rewritten_finish,
    .internal_begin = rewritten_own_begin, /* memtap's work is not logged */
    .internal_done = rewritten_own_end,
};
