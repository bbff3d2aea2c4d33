/*
 * stacks.c - the call stacks of heap events: unwinding the program's
 * stack from a heap wrapper (libgcc's unwinder, copied into libmemtap.so:
 * the program's .eh_frame, no frame pointers needed), and the
 * process's table of distinct stacks, each added to the trace's STACKS
 * table (trace/format.h, record/tables.h) the first time it is seen,
 * before any event names it.
 *
 * Unwinding costs microseconds a stack (libgcc interprets the frames'
 * CFI each time), so each thread remembers its last stacks by call site
 * with where their return addresses were on its stack, relative to this
 * file's own frame: when those places still hold those addresses, the
 * stack is the same (a loop's allocations), and its id is known in tens
 * of nanoseconds.  The places are checked from the innermost out, each
 * one inside the caller frames the places before it vouched for.
 *
 * The table takes no lock: a stack is looked up by its hash in open
 * addressing slots, and a new one gets its id, its row written, and is
 * then published into an empty slot by compare-and-swap.  Two threads
 * that meet the same new stack at once may both write it, under two ids
 * with the same frames: the reader takes either.  Everything lives in
 * memory mapped from the kernel, never in the program's heap.
 */
#define _GNU_SOURCE
#include "stacks.h"

#include "preload/core/config.h"
#include "preload/core/own_text.h"
#include "sys/hash.h"
#include "sys/rawsys.h"
#include "tables.h"
#include "trace/format.h"

#include <stdatomic.h>
#include <string.h>
#include <unwind.h>

/* libgcc's _Unwind_Backtrace, _Unwind_GetIP and _Unwind_GetCFA, in its copy
 * (src/preload/CMakeLists.txt): not exported. */
#define HIDDEN __attribute__((visibility("hidden")))
HIDDEN _Unwind_Reason_Code memtap_unwind_backtrace(_Unwind_Trace_Fn fn,
                                                   void *arg);
HIDDEN _Unwind_Ptr memtap_unwind_get_ip(struct _Unwind_Context *ctx);
HIDDEN _Unwind_Word memtap_unwind_get_cfa(struct _Unwind_Context *ctx);

#define SLOTS (1u << 20)        /* the table's slots */
#define STACKS_MAX (SLOTS / 2)  /* distinct stacks it holds (probing stays
                                   short) */
#define FRAMES_MAX (1u << 24)   /* their frames, all together */
#define PROBES 64u
#define SKIP_MAX 32u            /* memtap's frames above the call site */
#define DEPTH_DEFAULT 16u
#define CACHE_WAYS 64u          /* stacks a thread remembers (2^6) */
#define CACHE_DEPTH 16u         /* the deepest it remembers */

/* A stack a thread met at a call site: its id, and where each of its
 * return addresses was, relative to stacks_id's frame. */
typedef struct cached {
    uint64_t site;          /* 0: empty, or being written */
    uint32_t id, n;
    int32_t at[CACHE_DEPTH];
} cached;

static __thread cached tls_cache[CACHE_WAYS]
    __attribute__((tls_model("initial-exec")));

typedef struct stack_entry {
    uint32_t hash;
    uint32_t n;
    uint32_t at;            /* its frames in st.frames */
} stack_entry;

/* The pages of these mappings are the kernel's until touched. */
static struct {
    _Atomic int ready;      /* 1: on; -1: off (depth 0, or no memory);
                               2: being set up (by the first event's
                               thread: the others' events go without) */
    unsigned depth;
    _Atomic uint32_t *slots;      /* the id of an entry, 0: empty */
    stack_entry *entries;         /* by id - 1 */
    uint64_t *frames;
    _Atomic uint32_t next_id;     /* ids given so far */
    _Atomic uint32_t nframes;     /* frames taken so far */
} st;

/* libmemtap.so's text: its frames (the wrappers of main, of a thread's
 * start, of pthread_create) are not the program's. */
static unsigned long own_lo, own_hi;

/* Whether stacks are on, set up by the first caller. */
static int ready(void)
{
    int state = atomic_load(&st.ready);
    if (state != 0 || !atomic_compare_exchange_strong(&st.ready, &state, 2))
        return state == 1;
    int64_t want = config()->stack_depth;
    st.depth = want < 0 ? DEPTH_DEFAULT
                        : (unsigned)(want > MEMTAP_STACK_MAX ? MEMTAP_STACK_MAX
                                                             : want);
    own_text_range(&own_lo, &own_hi);
    if (st.depth) {
        st.slots = raw_map(SLOTS * sizeof *st.slots);
        st.entries = raw_map(STACKS_MAX * sizeof *st.entries);
        st.frames = raw_map(FRAMES_MAX * sizeof *st.frames);
    }
    state = st.slots && st.entries && st.frames ? 1 : -1;
    atomic_store(&st.ready, state);
    return state == 1;
}

/* ---- unwinding ---- */

typedef struct walk {
    uint64_t from;          /* the frame that returns here starts the stack */
    unsigned n, max, skipped;
    uint64_t *pc;
    uint64_t *slot;         /* where each pc was stored */
} walk;

static _Unwind_Reason_Code take_frame(struct _Unwind_Context *ctx, void *arg)
{
    walk *w = arg;
    /* a context's ip is the return address its frame was called with,
     * just below its CFA */
    uint64_t ip = (uint64_t)memtap_unwind_get_ip(ctx);
    uint64_t stored_at = (uint64_t)memtap_unwind_get_cfa(ctx) - 8;
    if (ip == 0)
        return _URC_END_OF_STACK;
    if (w->n == 0 && ip != w->from) /* memtap's frames, the allocator's */
        return ++w->skipped < SKIP_MAX ? _URC_NO_REASON : _URC_END_OF_STACK;
    if (ip - own_lo < own_hi - own_lo)
        return _URC_NO_REASON;
    w->slot[w->n] = stored_at;
    w->pc[w->n++] = ip;
    return w->n < w->max ? _URC_NO_REASON : _URC_END_OF_STACK;
}

/* ---- the table ---- */

static uint32_t hash_frames(const uint64_t *pc, unsigned n)
{
    return (uint32_t)fnv1a64(FNV64_OFFSET, pc, n * sizeof *pc);
}

static int same(const stack_entry *e, uint32_t hash, const uint64_t *pc,
                unsigned n)
{
    return e->hash == hash && e->n == n &&
           memcmp(st.frames + e->at, pc, n * 8u) == 0;
}

/* A new entry for the stack, its row written to the trace: its id, or 0. */
static uint32_t add(uint32_t hash, const uint64_t *pc, unsigned n)
{
    uint32_t id = atomic_fetch_add(&st.next_id, 1) + 1;
    uint32_t at = atomic_fetch_add(&st.nframes, n);
    if (id > STACKS_MAX || at > FRAMES_MAX - n)
        return 0;
    memcpy(st.frames + at, pc, n * 8u);
    st.entries[id - 1] = (stack_entry){ hash, n, at };
    struct {
        uint32_t id, n;
        uint64_t pc[MEMTAP_STACK_MAX];
    } row = { id, n, { 0 } };
    memcpy(row.pc, pc, n * 8u);
    if (tables_add(MEMTAP_TABLE_STACKS, 1, &row, 8u + n * 8u))
        return 0;
    return id;
}

static uint32_t intern(const uint64_t *pc, unsigned n)
{
    uint32_t hash = hash_frames(pc, n), mine = 0;
    for (uint32_t k = 0, i = hash; k < PROBES; k++, i++) {
        _Atomic uint32_t *slot = &st.slots[i & (SLOTS - 1)];
        uint32_t have = atomic_load_explicit(slot, memory_order_acquire);
        if (have == 0) {
            if (!mine && !(mine = add(hash, pc, n)))
                return 0;
            if (atomic_compare_exchange_strong_explicit(
                    slot, &have, mine, memory_order_release,
                    memory_order_acquire))
                return mine;
        }
        /* have: the slot's id, also when another thread just took it */
        if (same(&st.entries[have - 1], hash, pc, n))
            return have;
    }
    return mine; /* written, just not findable: the next one writes again */
}

static cached *way_of(uint64_t site)
{
    return &tls_cache[fib_hash(site, 6)];
}

/* Whether the stack c remembers is the one under base now. */
static int still_there(const cached *c, uintptr_t base)
{
    const stack_entry *e = &st.entries[c->id - 1];
    const uint64_t *pc = st.frames + e->at;
    for (uint32_t i = 0; i < c->n; i++)
        if (*(const uint64_t *)(base + (intptr_t)c->at[i]) != pc[i])
            return 0;
    return 1;
}

static void remember(cached *c, uint64_t site, uint32_t id, const walk *w,
                     uintptr_t base)
{
    if (w->n > CACHE_DEPTH)
        return;
    c->site = 0; /* a handler that interrupts this finds no entry */
    for (uint32_t i = 0; i < w->n; i++) {
        int64_t d = (int64_t)(w->slot[i] - base);
        if (d != (int32_t)d)
            return;
        c->at[i] = (int32_t)d;
    }
    c->id = id;
    c->n = w->n;
    atomic_signal_fence(memory_order_release);
    c->site = site;
}

uint32_t stacks_id(uint64_t site)
{
    if (site == 0 || !ready())
        return 0;
    uintptr_t base = (uintptr_t)__builtin_frame_address(0);
    cached *c = way_of(site);
    if (c->site == site && still_there(c, base))
        return c->id;
    uint64_t pc[MEMTAP_STACK_MAX], slot[MEMTAP_STACK_MAX];
    walk w = { .from = site, .max = st.depth, .pc = pc, .slot = slot };
    memtap_unwind_backtrace(take_frame, &w);
    uint32_t id = w.n ? intern(pc, w.n) : 0;
    if (id)
        remember(c, site, id, &w, base);
    return id;
}

void stacks_after_fork_child(void)
{
    /* the child's trace has none of the rows: it writes its own, and its
     * one thread forgets the ids it remembers */
    if (atomic_load(&st.ready) == 1) /* zero pages again */
        raw_syscall3(SYS_madvise, st.slots, SLOTS * sizeof *st.slots,
                     MADV_DONTNEED);
    memset(tls_cache, 0, sizeof tls_cache);
}
