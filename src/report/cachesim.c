/*
 * cachesim.c - the data cache model and its report (cachesim.h): a tool
 * of the offline interface (trace/tool.h) that runs every line access,
 * in the order of the events' sequence numbers (the reader's merged
 * walk), through the thread's D1 and the shared LL, keeps the D1s
 * coherent (a directory of who holds each line), and counts the misses
 * per object, as the namer names the address the access starts at.
 *
 * One file: the model's state (the sim) and its three outputs (text, JSON,
 * the page's data) read the same private tables.
 */
#define _GNU_SOURCE
#include "report/cachesim.h"
#include "report/cachesim_fields.h"
#include "report/csv_rows.h"
#include "report/index.h"
#include "report/json.h"
#include "report/page.h"
#include "symbols/heapmap.h"
#include "symbols/namer.h"
#include "sys/hash.h"
#include "sys/vec.h"
#include "trace/accesses.h"
#include "trace/follow.h"
#include "trace/tool.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define NAME_CAP 512
#define ADDR_CACHE 4096 /* the names of recent addresses, direct-mapped */
#define SPANS 8 /* the extents of the objects found last */

#define PC_CACHE 1024 /* instructions' indexes kept, direct-mapped */
#define FIELD_CACHE_BITS 10 /* fields' indexes kept, direct-mapped */
#define REUSE_BINS 40 /* 0, 1, 2-3, 4-7, ... distinct lines between uses */
#define TIME_BINS 256 /* the timeline's most bins: past them, each doubles */

typedef struct object_stats {
    char *name;
    uint64_t accesses, writes, d1, ll, compulsory, capacity, conflict;
    uint64_t true_sharing, false_sharing;   /* coherence misses */
    uint64_t d1_writebacks;     /* dirty lines its writes left that a D1 gave up */
    uint64_t memory_writebacks; /* ... that went on to memory */
    uint64_t reuse[REUSE_BINS];
} object_stats;

/* A thread's private first level (and, once there are threads, the fully
 * associative cache of its size that tells capacity from conflict misses:
 * with one thread, a line's reuse distance tells, which that cache would
 * hit exactly when it is below its size in lines). */
typedef struct thread_cache {
    cache_level d1;
    cache_full full;
} thread_cache;

/* The directory entry of a line: bits per thread (index % 64). */
typedef struct line_state {
    uint64_t touched;    /* threads that used the line */
    uint64_t holders;    /* threads whose D1 may hold it */
    uint64_t lost;       /* threads whose copy a write of another took */
} line_state;

typedef struct insn_stats {
    uint64_t pc;
    uint64_t accesses, d1, ll;
} insn_stats;

/* A span of time's line accesses and misses. */
typedef struct time_bin {
    uint64_t accesses, d1, ll;
} time_bin;

/* An object found, over its whole extent. */
typedef struct object_span {
    uint64_t lo, hi, gen;
    uint32_t object;
    uint64_t field;      /* a block's FIELD_HEAP | object <<
                            FIELD_OFFSET_BITS, 1 for a DWARF variable (its
                            addresses are its fields), else 0: none */
} object_span;

typedef struct named {
    uint64_t addr, gen;  /* gen 0: empty */
    uint32_t object;
    uint64_t field;      /* its field key (span_field) */
} named;

struct cachesim {
    cachesim_options opt;
    int attribute;       /* objects and instructions counted (a report);
                            else every access is one object's */
    cache_level ll;
    thread_cache *threads;
    size_t nthreads, threads_cap;
    index_map by_tid;
    line_state *lines;   /* by the line's reuse clock node */
    size_t nlines, lines_cap;
    index_map taken;     /* line << 6 | thread bit -> bytes written by other
                            threads since its copy was taken (a mask) */
    uint64_t *written;
    size_t nwritten, written_cap;
    unsigned line_shift;
    uint32_t d1_lines;   /* lines a D1 holds */
    symbolizer *sym;
    namer *names;
    uint64_t gen;        /* heap events so far + 1: names change with them */
    named *recent;
    object_span spans[SPANS]; /* the last objects found */
    unsigned span_last;  /* the one that answered last */
    unsigned span_prev;  /* ... and the one before it */
    unsigned span_next;  /* the next to give way */
    index_map by_field;  /* field key -> index into fields */
    field_stats *fields; /* per static address, per small blocks' offset */
    size_t nfields, fields_cap;
    cachesim_field *named_fields; /* ... named, once the walk is over */
    size_t nnamed_fields;
    reuse_clock clock;   /* also knows the lines touched */
    index_map by_name;
    index_map by_site;   /* a heap site's pc << 2 | how its blocks were made
                            (symbolizer_site_how) -> index into objects */
    object_stats *objects;
    size_t nobjects, objects_cap;
    index_map by_pc;
    insn_stats *insns;
    size_t ninsns, insns_cap;
    object_stats total;  /* the objects' sums, once the walk is over */
    struct {             /* the accesses and misses over time */
        time_bin bins[TIME_BINS];
        uint32_t n;      /* bins used */
        uint64_t width;  /* microseconds a bin: a power of two */
        time_bin *at;    /* the current record's, or NULL: no times */
        trace_clock clock; /* of the run going through */
    } timeline;
    memtap_trace *follow; /* opt.follow: the tables of a trace still
                            being written, taken in as they come */
    struct {             /* the thread of the last event */
        uint32_t tid;
        size_t index;    /* + 1; 0: none */
    } last_tid;
    struct {             /* the last line access that went through the model */
        uint64_t line;   /* line + 1; 0: none */
        size_t thread;
        int alone;       /* no other thread can hold the line */
    } last;
    struct {             /* recent instructions: pc + 1 -> index into insns */
        uint64_t pc;
        uint32_t index;
    } recent_pc[PC_CACHE];
    struct {             /* recent fields: key + 1 -> index into fields */
        uint64_t key;
        uint32_t index;
    } recent_field[1u << FIELD_CACHE_BITS];
};
typedef struct cachesim sim;

static int reuse_bin(int64_t d)
{
    int b = d == 0 ? 0 : 64 - __builtin_clzll((uint64_t)d);
    return b < REUSE_BINS ? b : REUSE_BINS - 1;
}

/* The field key of addr in object span o. */
static uint64_t span_field(const object_span *o, uint64_t addr)
{
    if (!o->field)
        return 0;
    return o->field & FIELD_HEAP ? o->field | (addr - o->lo) : addr;
}

/* Whether span o holds addr. */
static int span_holds(const sim *s, const object_span *o, uint64_t addr)
{
    return addr - o->lo < o->hi - o->lo && o->gen == s->gen;
}

/* Span k answers now (the one that did before comes second). */
static object_span *span_answers(sim *s, unsigned k)
{
    s->span_prev = s->span_last;
    s->span_last = k;
    return &s->spans[k];
}

/* The span that answered before the last one (object_of asked the last)
 * when it holds addr (a loop between two objects, a heap block and the
 * stack), answering now; else NULL. */
static object_span *span_before(sim *s, uint64_t addr)
{
    if (span_holds(s, &s->spans[s->span_prev], addr))
        return span_answers(s, s->span_prev);
    return NULL;
}

/* Any span of the objects found last that holds addr, or NULL. */
static object_span *span_of(sim *s, uint64_t addr)
{
    for (unsigned k = 0; k < SPANS; k++)
        if (span_holds(s, &s->spans[k], addr))
            return span_answers(s, k);
    return NULL;
}

/* A new span of the objects found last, in place of the oldest. */
static object_span *span_new(sim *s)
{
    unsigned k = s->span_next;
    s->span_next = (k + 1) % SPANS;
    return span_answers(s, k);
}

/* [lo, hi) but the heap's blocks around addr. */
static void span_set(sim *s, object_span *o, uint64_t lo, uint64_t hi, uint64_t addr)
{
    uint64_t free_lo, free_hi;
    namer_heap_gap(s->names, addr, &free_lo, &free_hi);
    o->lo = lo > free_lo ? lo : free_lo;
    o->hi = hi < free_hi ? hi : free_hi;
}

/* The object named name, by index into s->objects, made on first use;
 * -1 when out of memory. */
static int64_t object_named(sim *s, const char *name)
{
    int64_t i = index_get_str(&s->by_name, name);
    if (i >= 0)
        return i;
    object_stats *o = array_push((void **)&s->objects, &s->nobjects, &s->objects_cap,
                                 sizeof *o);
    if (!o || !(o->name = strdup(name)) ||
        index_put_str(&s->by_name, name, (uint32_t)(s->nobjects - 1)) != 0)
        return -1;
    return (int64_t)s->nobjects - 1;
}

/* The object of heap block b: its site's blocks together, as report has
 * them; -1 when out of memory. */
static int64_t site_object(sim *s, const heap_block *b)
{
    uint64_t key = b->site << 2 | symbolizer_site_how(b->kind);
    int made;
    uint32_t *at = index_value(&s->by_site, key, &made);
    if (!at)
        return -1;
    if (!made)
        return *at;
    char name[NAME_CAP];
    symbolizer_site_text(s->sym, b, name, sizeof name);
    int64_t i = object_named(s, name);
    if (i >= 0) /* (at is still good: no other insertion came between) */
        *at = (uint32_t)i;
    return i;
}

/* The object of data d, not the heap's; -1 when out of memory. */
static int64_t data_object(sim *s, const data_name *d)
{
    char name[NAME_CAP];
    namer_object_text(s->names, d, name, sizeof name);
    return object_named(s, name);
}

/* object_of of an address the span that answered last does not hold. */
static int64_t object_found(sim *s, uint64_t addr, uint64_t *field)
{
    object_span *o = span_before(s, addr);
    named *r = &s->recent[(addr >> 3) % ADDR_CACHE];
    if (!o && r->gen == s->gen && r->addr == addr) { /* (a name that holds */
        *field = r->field;                         /* at one address) */
        return r->object;
    }
    if (o || (o = span_of(s, addr))) {
        *field = span_field(o, addr);
        return o->object;
    }
    data_name d;
    namer_data(s->names, addr, &d);
    int64_t i = d.kind == DATA_HEAP ? site_object(s, &d.block) : data_object(s, &d);
    if (i < 0)
        return -1;
    o = span_new(s);
    if (d.kind == DATA_HEAP)
        o->lo = d.block.start, o->hi = d.block.start + d.block.size;
    else if (d.same_hi > d.same_lo) /* named the same way throughout (up */
        span_set(s, o, d.same_lo, d.same_hi, addr); /* to the heap's blocks) */
    else /* no extent known: an empty span */
        o->lo = o->hi = 0;
    o->gen = s->gen;
    o->object = (uint32_t)i;
    /* fields: a small block's offsets, a DWARF variable's addresses (a
     * section or symbol is all one name) */
    o->field = d.kind == DATA_HEAP ? (d.block.size <= FIELD_BLOCK_MAX
                                          ? FIELD_HEAP | (uint64_t)i << FIELD_OFFSET_BITS
                                          : 0)
                                   : d.kind == DATA_VARIABLE;
    *field = span_field(o, addr);
    *r = (named){ addr, s->gen, (uint32_t)i, *field };
    return i;
}

/* The object holding addr, by index into s->objects, and in *field its
 * field key (0: none); -1 when out of memory. */
static inline __attribute__((always_inline)) int64_t
object_of(sim *s, uint64_t addr, uint64_t *field)
{
    const object_span *o = &s->spans[s->span_last];
    if (!span_holds(s, o, addr))
        return object_found(s, addr, field);
    *field = span_field(o, addr);
    return o->object;
}

/* The index of key's element of the array *v (*n of them, room for
 * *cap, elem bytes each) that m indexes, a new zeroed one when key has
 * none (*made then set); -1 when out of memory. */
static int64_t element_of(index_map *m, uint64_t key, void **v, size_t *n,
                          size_t *cap, size_t elem, int *made)
{
    uint32_t *i = index_value(m, key, made);
    if (!i)
        return -1;
    if (*made) {
        if (!array_push(v, n, cap, elem))
            return -1;
        *i = (uint32_t)(*n - 1);
    }
    return *i;
}

/* insn_of of a pc the recent ones do not hold. */
static int64_t insn_found(sim *s, uint64_t pc)
{
    __typeof__(s->recent_pc[0]) *r = &s->recent_pc[(pc ^ pc >> 10) % PC_CACHE];
    int made;
    int64_t i = element_of(&s->by_pc, pc, (void **)&s->insns, &s->ninsns,
                           &s->insns_cap, sizeof *s->insns, &made);
    if (i >= 0 && made)
        s->insns[i].pc = pc;
    if (i >= 0)
        r->pc = pc + 1, r->index = (uint32_t)i;
    return i;
}

/* The instruction at pc, by index into s->insns; -1 when out of memory. */
static inline __attribute__((always_inline)) int64_t insn_of(sim *s, uint64_t pc)
{
    __typeof__(s->recent_pc[0]) *r = &s->recent_pc[(pc ^ pc >> 10) % PC_CACHE];
    if (r->pc == pc + 1)
        return r->index;
    return insn_found(s, pc);
}

/* The field of key (field_stats), made on its first access at addr; NULL
 * when out of memory. */
static field_stats *field_of(sim *s, uint64_t key, uint64_t addr)
{
    __typeof__(s->recent_field[0]) *r = &s->recent_field[fib_hash(key, FIELD_CACHE_BITS)];
    if (r->key == key + 1)
        return &s->fields[r->index];
    int made;
    int64_t i = element_of(&s->by_field, key, (void **)&s->fields, &s->nfields,
                           &s->fields_cap, sizeof *s->fields, &made);
    if (i < 0)
        return NULL;
    field_stats *f = &s->fields[i];
    if (made) {
        f->key = key;
        const heap_block *b = key & FIELD_HEAP ? namer_block_at(s->names, addr) : NULL;
        if (b)
            f->block = *b;
    }
    r->key = key + 1;
    r->index = (uint32_t)i;
    return f;
}

/* The index of thread tid's caches, made on its first access; -1 when
 * out of memory. */
static int64_t thread_of(sim *s, uint32_t tid)
{
    if (s->last_tid.index && s->last_tid.tid == tid)
        return (int64_t)s->last_tid.index - 1;
    int made;
    int64_t i = element_of(&s->by_tid, tid, (void **)&s->threads, &s->nthreads,
                           &s->threads_cap, sizeof *s->threads, &made);
    if (i < 0)
        return -1;
    uint32_t lines = s->d1_lines;
    if (made && (cache_level_init(&s->threads[i].d1, &s->opt.d1) != 0 ||
                 (s->nthreads > 1 && cache_full_init(&s->threads[i].full, lines) != 0)))
        return -1;
    /* the first thread's fully associative cache, as it is now: the lines
     * it used last */
    if (made && s->nthreads == 2 &&
        (cache_full_init(&s->threads[0].full, lines) != 0 ||
         reuse_clock_recent(&s->clock, &s->threads[0].full) != 0))
        return -1;
    s->last_tid.tid = tid;
    s->last_tid.index = (size_t)i + 1;
    return i;
}

/* The directory entry of the line of reuse clock node `node`, made on
 * its first use; NULL when out of memory.  While the trace had one
 * thread there was none: a line used before (used_before) then was
 * used, and may be held, by the first thread (index 0) alone. */
static line_state *line_of(sim *s, uint32_t node, int used_before)
{
    while (s->nlines <= node)
        if (!array_push((void **)&s->lines, &s->nlines, &s->lines_cap, sizeof *s->lines))
            return NULL;
    line_state *ls = &s->lines[node];
    if (!ls->touched && used_before) /* (a line the model had, touched) */
        ls->touched = ls->holders = 1;
    return ls;
}

/* The bytes written into line by other threads since thread bit b's copy
 * was taken; NULL when out of memory. */
static uint64_t *written_since(sim *s, uint64_t line, unsigned b)
{
    int made;
    int64_t i = element_of(&s->taken, line << 6 | b, (void **)&s->written,
                           &s->nwritten, &s->written_cap, sizeof *s->written, &made);
    return i < 0 ? NULL : &s->written[i];
}

/* The bytes of its line that [addr, addr + size) covers, a bit per
 * 64th of the line. */
static uint64_t byte_mask(const sim *s, uint64_t addr, uint64_t size)
{
    unsigned shift = s->line_shift > 6 ? s->line_shift - 6 : 0;
    uint64_t off = addr & ((1ull << s->line_shift) - 1);
    unsigned from = (unsigned)(off >> shift), to = (unsigned)((off + size - 1) >> shift);
    uint64_t upto = to >= 63 ? ~0ull : (2ull << to) - 1;
    return upto & ~((1ull << from) - 1);
}

/* Thread ti writes [addr, addr + size) of line: every other thread's
 * copy goes, and what it has lost since grows by those bytes; 0, or 1
 * when out of memory. */
static int invalidate_others(sim *s, line_state *ls, uint64_t line, size_t ti,
                             uint64_t addr, uint64_t size)
{
    uint64_t me = 1ull << (ti % 64);
    for (uint64_t others = ls->holders & ~me; others; others &= others - 1) {
        unsigned b = (unsigned)__builtin_ctzll(others);
        for (size_t j = b; j < s->nthreads; j += 64) {
            if (!cache_level_drop(&s->threads[j].d1, line))
                continue;
            cache_full_drop(&s->threads[j].full, line);
            uint64_t *w = written_since(s, line, b);
            if (!w)
                return 1;
            *w = 0;
            ls->lost |= 1ull << b;
        }
    }
    ls->holders = me;
    uint64_t lost = ls->lost & ~me;
    uint64_t mask = lost ? byte_mask(s, addr, size) : 0;
    for (; lost; lost &= lost - 1) {
        uint64_t *w = written_since(s, line, (unsigned)__builtin_ctzll(lost));
        if (!w)
            return 1;
        *w |= mask;
    }
    return 0;
}

/* What became of one line access: its reuse distance (-1: the line's
 * first use) and, when D1 missed, its OUT_ bits (0: a hit). */
typedef struct outcome {
    int64_t distance;
    unsigned miss;
} outcome;
enum {
    OUT_D1 = 1,          /* D1 missed */
    OUT_LL = 2,          /* ... and so did LL */
    OUT_FIRST = 4,       /* the cause: the thread's first use of the line */
    OUT_CAPACITY = 8,    /* ... a fully associative D1 missed too */
    OUT_CONFLICT = 16,   /* ... it would have hit */
    OUT_COHERENCE = 32,  /* ... another thread's write took the copy */
    OUT_TRUE = 64,       /* ... and wrote bytes this access uses */
};

/* The miss bits of a D1 miss (d1_hit 0) of the given causes. */
static inline unsigned miss_bits(int d1_hit, int ll_hit, int first, int coherence,
                                 int true_sharing, int full_hit)
{
    if (d1_hit)
        return 0;
    return OUT_D1 | (ll_hit ? 0 : OUT_LL) |
           (first ? OUT_FIRST : coherence ? OUT_COHERENCE | (true_sharing ? OUT_TRUE : 0)
            : full_hit ? OUT_CONFLICT : OUT_CAPACITY);
}

/* Dirty data of owner's (an object's index + 1) reaches memory. */
static void memory_write_back(sim *s, uint32_t owner)
{
    s->objects[owner - 1].memory_writebacks++;
}

/* A dirty line a D1 gave up (v): its data goes to the last level, or on
 * to memory when that does not hold the line. */
static void d1_write_back(sim *s, const cache_victim *v)
{
    s->objects[v->owner - 1].d1_writebacks++;
    if (!cache_level_write_back(&s->ll, v->line, v->owner))
        memory_write_back(s, v->owner);
}

/* An access of line in d1 and, on a miss there, in the last level,
 * dirty lines going down as they leave, and its reuse distance
 * (reuse_clock_use, -2 when out of memory), with its node (+ 1) in
 * *node, found through the level that held it (d1, or on a miss there
 * the last level, accessed after it; both keep the node then).  Whether
 * d1 held the line, and in *ll_hit whether the last level did (1: not
 * asked). */
static inline __attribute__((always_inline)) int
levels_access(sim *s, cache_level *d1, uint64_t line, uint32_t owner, int *ll_hit,
              int64_t *distance, uint32_t *node)
{
    cache_victim v;
    uint64_t at = cache_level_set(d1, line);
    int d1_hit = cache_level_access(d1, at, line, owner, &v);
    uint32_t *k = &d1->ways[at].kept, *held = k;
    *ll_hit = 1;
    if (!d1_hit) {
        if (v.owner)
            d1_write_back(s, &v);
        uint64_t ll_at = cache_level_set(&s->ll, line);
        *ll_hit = cache_level_access(&s->ll, ll_at, line, 0, &v);
        if (!*ll_hit && v.owner)
            memory_write_back(s, v.owner);
        held = &s->ll.ways[ll_at].kept;
    }
    *distance = reuse_clock_use(&s->clock, line, held);
    *node = *k = *held;
    return d1_hit;
}

/* model_line of the one thread there is so far: no other D1 to keep
 * coherent, the reuse distance tells a fully associative cache's hit. */
static inline __attribute__((always_inline)) int
model_alone(sim *s, uint64_t line, uint32_t owner, outcome *out)
{
    int ll_hit;
    int64_t distance;
    uint32_t node;
    int d1_hit = levels_access(s, &s->threads[0].d1, line, owner, &ll_hit, &distance, &node);
    if (distance == -2)
        return 1;
    out->distance = distance;
    out->miss = miss_bits(d1_hit, ll_hit, distance < 0, 0, 0,
                          distance < (int64_t)s->d1_lines);
    return 0;
}

/* Runs one line access of size bytes at addr by thread ti through the
 * caches (there are threads), a write when owner (the written object's
 * index + 1) is not 0; 0, or 1 when out of memory. */
static int model_line(sim *s, size_t ti, uint64_t line, uint64_t addr,
                      uint64_t size, uint32_t owner, outcome *out)
{
    int write = owner != 0;
    uint64_t me = 1ull << (ti % 64);
    thread_cache *tc = &s->threads[ti];
    int ll_hit;
    int64_t distance;
    uint32_t node;
    int d1_hit = levels_access(s, &tc->d1, line, owner, &ll_hit, &distance, &node);
    line_state *ls;
    if (distance == -2 || !(ls = line_of(s, node - 1, distance >= 0)))
        return 1;
    int first = !(ls->touched & me);
    int full_hit = cache_full_access(&tc->full, line);
    int coherence = !first && !d1_hit && (ls->lost & me);
    int true_sharing = 0;
    if (ls->lost & me) {
        uint64_t *w = written_since(s, line, (unsigned)(ti % 64));
        if (!w)
            return 1;
        true_sharing = coherence && (*w & byte_mask(s, addr, size));
        *w = 0;
    }
    out->distance = distance;
    out->miss = miss_bits(d1_hit, ll_hit, first, coherence, true_sharing, full_hit);
    ls->touched |= me;
    ls->holders |= me;
    ls->lost &= ~me;
    return write && invalidate_others(s, ls, line, ti, addr, size);
}

static const char *cause_of(const outcome *r)
{
    return r->miss & OUT_FIRST ? "compulsory"
           : r->miss & OUT_COHERENCE ? (r->miss & OUT_TRUE ? "true sharing" : "false sharing")
           : r->miss & OUT_CAPACITY ? "capacity" : "conflict";
}

/* One line of the miss stream. */
static void put_miss(sim *s, const memtap_record *x, uint32_t tid, uint64_t addr,
                     const outcome *r, const char *object)
{
    fprintf(s->opt.misses, "%" PRIu64 ",%" PRIu32 ",0x%" PRIx64 ",0x%" PRIx64 ",%s,%s,",
            x->seq, tid, x->pc, addr, r->miss & OUT_LL ? "LL" : "D1",
            cause_of(r));
    csv_field(s->opt.misses, object);
    fputc('\n', s->opt.misses);
}

/* A line access's D1 miss (miss bits m) in a row of a table. */
static void tally_miss(uint64_t *d1, uint64_t *ll, unsigned m)
{
    ++*d1;
    *ll += (m & OUT_LL) != 0;
}

/* The misses of one line access (outcome r): o's, and those of its
 * instruction x, its field f and its time bin t (when counted). */
static void count_miss(object_stats *o, insn_stats *x, field_stats *f, time_bin *t,
                       unsigned m)
{
    tally_miss(&o->d1, &o->ll, m);
    if (x)
        tally_miss(&x->d1, &x->ll, m);
    if (f)
        tally_miss(&f->d1, &f->ll, m);
    if (t)
        tally_miss(&t->d1, &t->ll, m);
    o->compulsory += (m & OUT_FIRST) != 0;
    o->capacity += (m & OUT_CAPACITY) != 0;
    o->conflict += (m & OUT_CONFLICT) != 0;
    o->true_sharing += (m & OUT_TRUE) != 0;
    o->false_sharing += (m & (OUT_COHERENCE | OUT_TRUE)) == OUT_COHERENCE;
}

/* The counts of one line access's outcome r: o's, and those of its
 * instruction x, its field f and its time bin t (when counted). */
static inline __attribute__((always_inline)) void
count(object_stats *o, insn_stats *x, field_stats *f, time_bin *t, int write, const outcome *r)
{
    o->accesses++;
    o->writes += write;
    if (r->distance >= 0)
        o->reuse[reuse_bin(r->distance)]++;
    if (x)
        x->accesses++;
    if (f)
        f->accesses++;
    if (t)
        t->accesses++;
    if (r->miss)
        count_miss(o, x, f, t, r->miss);
}

/* One line access of size bytes at addr by record x of thread tid (the
 * model's thread ti); 0, or 1 when out of memory.  The same thread's access of the line
 * it accessed last changes nothing a model keeps but the counts: a hit
 * everywhere (the line is the most recent in every cache, no thread came
 * between), at reuse distance 0; a write too when no other thread can
 * hold the line (the last access wrote it, or one thread only). */
static inline __attribute__((always_inline)) int
access_line(sim *s, size_t ti, const memtap_record *x, uint32_t tid,
                       uint64_t addr, uint64_t size, int write, cachesim_outcome *out)
{
    uint64_t line = addr >> s->line_shift;
    uint64_t field = 0;
    int64_t i = s->attribute ? object_of(s, addr, &field) : 0;
    int64_t k = s->attribute ? insn_of(s, x->pc) : 0;
    if (i < 0 || k < 0)
        return 1;
    uint32_t owner = write ? (uint32_t)i + 1 : 0;
    outcome r = { 0, 0 };
    if (line + 1 != s->last.line || ti != s->last.thread ||
        (write && !s->last.alone)) {
        if (s->nthreads == 1 ? model_alone(s, line, owner, &r)
                             : model_line(s, ti, line, addr, size, owner, &r))
            return 1;
        s->last.line = line + 1;
        s->last.thread = ti;
        s->last.alone = write || s->nthreads == 1;
    } else if (write) { /* the first way of its set: the data is owner's */
        cache_level *d1 = &s->threads[ti].d1;
        cache_victim unused;
        cache_level_access(d1, cache_level_set(d1, line), line, owner, &unused);
    } /* (the reuse clock need not tick: no other line came between) */
    field_stats *f = field && s->opt.fields ? field_of(s, field, addr) : NULL;
    if (field && s->opt.fields && !f)
        return 1;
    count(&s->objects[i], s->attribute ? &s->insns[k] : NULL, f, s->timeline.at, write,
          &r);
    if (!r.miss)
        return 0;
    if (s->opt.misses)
        put_miss(s, x, tid, addr, &r, s->objects[i].name);
    if (out) {
        out->d1_misses++;
        out->ll_misses += (r.miss & OUT_LL) != 0;
        if (!out->cause)
            out->cause = cause_of(&r);
    }
    return 0;
}

/* Records left out (trace/tool.h): their heap events name what is kept. */
static int sim_learn(void *self, const memtap_record *recs, size_t n, uint32_t tid)
{
    (void)tid;
    sim *s = self;
    if (s->attribute)
        s->gen += namer_learn_all(s->names, recs, n);
    return 0;
}

/* cachesim_event of record r of thread tid, the model's thread ti. */
static inline __attribute__((always_inline)) int
sim_record(sim *s, const memtap_record *r, uint32_t tid, size_t ti, cachesim_outcome *out)
{
    if (out)
        *out = (cachesim_outcome){ 0, 0, 0, NULL };
    uint64_t line = 1ull << s->line_shift;
    /* most records: a load or a store inside one line */
    if ((r->kind == MEMTAP_EV_LOAD || r->kind == MEMTAP_EV_STORE) && r->size &&
        (r->addr & (line - 1)) + r->size <= line) {
        if (access_line(s, ti, r, tid, r->addr, r->size, r->kind == MEMTAP_EV_STORE, out))
            return 1;
        if (out)
            out->lines++;
        return 0;
    }
    trace_access a[2];
    int n = trace_record_accesses(r, a);
    if (n == 0 && s->attribute && heap_map_kind(r->kind)) { /* names change */
        namer_learn(s->names, r, NULL);
        s->gen++;
    }
    for (int k = 0; k < n; k++) {
        uint64_t addr = a[k].addr, size = a[k].size ? a[k].size : 1;
        while (size > 0) {
            uint64_t piece = trace_line_piece(addr, size, line);
            if (access_line(s, ti, r, tid, addr, piece, a[k].write, out))
                return 1;
            if (out)
                out->lines++;
            addr += piece;
            size -= piece;
        }
    }
    return 0;
}

int cachesim_event(cachesim *s, const memtap_event *ev, cachesim_outcome *out)
{
    int64_t ti = thread_of(s, ev->tid);
    return ti < 0 || sim_record(s, &ev->rec, ev->tid, (size_t)ti, out);
}

static int by_d1_misses(const void *a, const void *b)
{
    const object_stats *x = a, *y = b;
    if (x->d1 != y->d1)
        return x->d1 < y->d1 ? 1 : -1;
    return strcmp(x->name, y->name);
}

static int insn_by_d1_misses(const void *a, const void *b)
{
    const insn_stats *x = a, *y = b;
    if (x->d1 != y->d1)
        return x->d1 < y->d1 ? 1 : -1;
    return x->pc < y->pc ? -1 : x->pc > y->pc;
}

static double per_mille(uint64_t n, uint64_t of)
{
    return of ? 1000.0 * (double)n / (double)of : 0.0;
}

static void print_report(sim *s, const cachesim_options *opt, FILE *out)
{
    const cache_geometry *d1 = &opt->d1, *ll = &opt->ll;
    const object_stats *t = &s->total;
    fprintf(out, "cache model: D1 %" PRIu64 " B, %u-way, %u-B lines, one per thread; LL %"
                 PRIu64 " B, %u-way, %u-B lines, shared; LRU, write-allocate, write-back, "
                 "a write invalidates other threads' copies\n",
            d1->size, d1->assoc, d1->line, ll->size, ll->assoc, ll->line);
    fprintf(out, "line accesses: %" PRIu64 " (%" PRIu64 " reads, %" PRIu64
                 " writes); lines touched: %" PRIu64 "; threads: %zu\n",
            t->accesses, t->accesses - t->writes, t->writes, (uint64_t)s->clock.nnodes,
            s->nthreads);
    if (s->nthreads > 1 && s->follow)
        fprintf(out, "threads interleave a chunk of each at a time, as the trace was "
                     "written (for sharing misses, memtap run --engine fault, then "
                     "memtap cachesim on its trace)\n");
    else if (s->nthreads > 1)
        fprintf(out, "threads interleave in the order of the trace's sequence numbers "
                     "(the static engine numbers a thread's logged accesses a buffer "
                     "at a time: for sharing misses, trace with --engine fault)\n");
    fprintf(out, "D1 misses: %" PRIu64 " (%.1f per 1000 accesses); LL misses: %"
                 PRIu64 " (%.1f per 1000)\n",
            t->d1, per_mille(t->d1, t->accesses), t->ll, per_mille(t->ll, t->accesses));
    fprintf(out, "D1 misses by cause: compulsory %" PRIu64 ", capacity %" PRIu64
                 ", conflict %" PRIu64 ", coherence %" PRIu64 " (true sharing %" PRIu64
                 ", false sharing %" PRIu64 ")\n", t->compulsory, t->capacity,
            t->conflict, t->true_sharing + t->false_sharing, t->true_sharing,
            t->false_sharing);
    fprintf(out, "write-backs: %" PRIu64 " dirty lines out of D1, %" PRIu64
                 " to memory\n", t->d1_writebacks, t->memory_writebacks);
    qsort(s->objects, s->nobjects, sizeof *s->objects, by_d1_misses);
    fprintf(out, "\nobjects by D1 misses:\n%11s %11s %11s %11s %11s %11s %11s %11s "
                 "%11s %11s  %s\n", "D1 misses", "LL misses", "compulsory", "capacity",
            "conflict", "true-share", "false-share", "D1-wback", "mem-wback", "accesses",
            "object");
    for (size_t i = 0; i < s->nobjects && (int)i < opt->top; i++) {
        const object_stats *o = &s->objects[i];
        fprintf(out, "%11" PRIu64 " %11" PRIu64 " %11" PRIu64 " %11" PRIu64 " %11" PRIu64
                     " %11" PRIu64 " %11" PRIu64 " %11" PRIu64 " %11" PRIu64 " %11" PRIu64
                     "  %s\n", o->d1, o->ll, o->compulsory, o->capacity, o->conflict,
                o->true_sharing, o->false_sharing, o->d1_writebacks, o->memory_writebacks,
                o->accesses, o->name);
    }
    if (opt->fields)
        fprintf(out, "\nfields by D1 misses (array indices and offsets in static data "
                     "left out; heap blocks of up to %u bytes by member, or offset):\n"
                     "%11s %11s %11s  %s\n",
                FIELD_BLOCK_MAX, "D1 misses", "LL misses", "accesses", "field");
    for (size_t i = 0; i < s->nnamed_fields && (int)i < opt->top; i++) {
        const cachesim_field *f = &s->named_fields[i];
        fprintf(out, "%11" PRIu64 " %11" PRIu64 " %11" PRIu64 "  %s\n", f->d1, f->ll,
                f->accesses, f->name);
    }
    fprintf(out, "\nreuse distances of these objects (distinct lines used between "
                 "two uses of a line: uses):\n");
    for (size_t i = 0; i < s->nobjects && (int)i < opt->top; i++) {
        const object_stats *o = &s->objects[i];
        fprintf(out, "  %s:", o->name);
        for (int b = 0; b < REUSE_BINS; b++)
            if (o->reuse[b] && b < 2)
                fprintf(out, " %d: %" PRIu64, b, o->reuse[b]);
            else if (o->reuse[b])
                fprintf(out, " %llu-%llu: %" PRIu64, 1ull << (b - 1),
                        (1ull << b) - 1, o->reuse[b]);
        fprintf(out, o->accesses > o->compulsory ? "\n" : " (no line used twice)\n");
    }
    qsort(s->insns, s->ninsns, sizeof *s->insns, insn_by_d1_misses);
    fprintf(out, "\ninstructions by D1 misses:\n%11s %11s %11s  %s\n", "D1 misses",
            "LL misses", "accesses", "instruction");
    for (size_t i = 0; i < s->ninsns && (int)i < opt->top; i++) {
        const insn_stats *x = &s->insns[i];
        char code[NAME_CAP], line[NAME_CAP];
        symbolizer_code(s->sym, x->pc, code, sizeof code);
        int has_line = symbolizer_line(s->sym, x->pc, line, sizeof line);
        fprintf(out, "%11" PRIu64 " %11" PRIu64 " %11" PRIu64 "  %s%s%s\n", x->d1,
                x->ll, x->accesses, code, has_line ? " " : "", has_line ? line : "");
    }
}

static void json_level(FILE *out, const char *key, const cache_geometry *g)
{
    fprintf(out, "\"%s\": {\"size\": %" PRIu64 ", \"assoc\": %u, \"line\": %u}", key,
            g->size, g->assoc, g->line);
}

/* One count of the timeline's bins (at `field` of each) as a JSON list. */
static void json_bins(const sim *s, const char *key, size_t field, FILE *out)
{
    fprintf(out, ", \"%s\": [", key);
    for (uint32_t k = 0; k < s->timeline.n; k++) {
        uint64_t v;
        memcpy(&v, (const char *)&s->timeline.bins[k] + field, sizeof v);
        fprintf(out, "%s%" PRIu64, k ? ", " : "", v);
    }
    fputc(']', out);
}

/* The same as print_report, as one JSON object: every object, the top
 * instructions (s: the sim). */
static void print_json(void *self, FILE *out)
{
    sim *s = self;
    const cachesim_options *opt = &s->opt;
    const object_stats *t = &s->total;
    qsort(s->objects, s->nobjects, sizeof *s->objects, by_d1_misses);
    qsort(s->insns, s->ninsns, sizeof *s->insns, insn_by_d1_misses);
    fputc('{', out);
    json_level(out, "d1", &opt->d1);
    fputs(", ", out);
    json_level(out, "ll", &opt->ll);
    fprintf(out, ", \"threads\": %zu, \"accesses\": %"
                 PRIu64 ", \"reads\": %" PRIu64 ", \"writes\": %"
                 PRIu64 ", \"d1_misses\": %" PRIu64 ", \"ll_misses\": %" PRIu64
                 ", \"compulsory\": %" PRIu64 ", \"capacity\": %" PRIu64
                 ", \"conflict\": %" PRIu64 ", \"true_sharing\": %" PRIu64
                 ", \"false_sharing\": %" PRIu64 ", \"d1_writebacks\": %" PRIu64
                 ", \"memory_writebacks\": %" PRIu64 ",\n\"objects\": [",
            s->nthreads, t->accesses, t->accesses - t->writes, t->writes, t->d1, t->ll,
            t->compulsory, t->capacity, t->conflict, t->true_sharing, t->false_sharing,
            t->d1_writebacks, t->memory_writebacks);
    for (size_t i = 0; i < s->nobjects; i++) {
        const object_stats *o = &s->objects[i];
        fputs(i ? ",\n{\"name\": " : "\n{\"name\": ", out);
        json_str(out, o->name);
        fprintf(out, ", \"accesses\": %" PRIu64 ", \"d1_misses\": %" PRIu64
                     ", \"ll_misses\": %" PRIu64 ", \"compulsory\": %" PRIu64
                     ", \"capacity\": %" PRIu64 ", \"conflict\": %" PRIu64
                     ", \"true_sharing\": %" PRIu64 ", \"false_sharing\": %" PRIu64
                     ", \"d1_writebacks\": %" PRIu64 ", \"memory_writebacks\": %" PRIu64
                     ", \"reuse\": [", o->accesses, o->d1, o->ll, o->compulsory,
                o->capacity, o->conflict, o->true_sharing, o->false_sharing,
                o->d1_writebacks, o->memory_writebacks);
        int first = 1;
        for (int b = 0; b < REUSE_BINS; b++)
            if (o->reuse[b]) {
                fprintf(out, "%s[%llu, %llu, %" PRIu64 "]", first ? "" : ", ",
                        b ? 1ull << (b - 1) : 0ull, b ? (1ull << b) - 1 : 0ull,
                        o->reuse[b]);
                first = 0;
            }
        fputs("]}", out);
    }
    fputs("],\n\"fields\": [", out);
    for (size_t i = 0; i < s->nnamed_fields; i++) {
        const cachesim_field *f = &s->named_fields[i];
        fputs(i ? ",\n{\"name\": " : "\n{\"name\": ", out);
        json_str(out, f->name);
        fprintf(out, ", \"accesses\": %" PRIu64 ", \"d1_misses\": %" PRIu64
                     ", \"ll_misses\": %" PRIu64 "}", f->accesses, f->d1, f->ll);
    }
    fputs("],\n\"instructions\": [", out);
    for (size_t i = 0; i < s->ninsns && (int)i < opt->top; i++) {
        const insn_stats *x = &s->insns[i];
        char code[NAME_CAP], line[NAME_CAP];
        symbolizer_code(s->sym, x->pc, code, sizeof code);
        if (!symbolizer_line(s->sym, x->pc, line, sizeof line))
            line[0] = '\0';
        fputs(i ? ",\n{" : "\n{", out);
        json_addr(out, "pc", x->pc);
        fputs(", \"code\": ", out);
        json_str(out, code);
        fputs(", \"line\": ", out);
        json_str(out, line);
        fprintf(out, ", \"accesses\": %" PRIu64 ", \"d1_misses\": %" PRIu64
                     ", \"ll_misses\": %" PRIu64 "}", x->accesses, x->d1, x->ll);
    }
    fprintf(out, "],\n\"timeline\": {\"bin_us\": %" PRIu64,
            s->timeline.n ? s->timeline.width : 0);
    json_bins(s, "accesses", offsetof(time_bin, accesses), out);
    json_bins(s, "d1_misses", offsetof(time_bin, d1), out);
    json_bins(s, "ll_misses", offsetof(time_bin, ll), out);
    fputs("}}\n", out);
}

/* The totals: the objects' sums. */
static void sum_objects(sim *s)
{
    object_stats *t = &s->total;
    for (size_t i = 0; i < s->nobjects; i++) {
        const object_stats *o = &s->objects[i];
        t->accesses += o->accesses;
        t->writes += o->writes;
        t->d1 += o->d1;
        t->ll += o->ll;
        t->compulsory += o->compulsory;
        t->capacity += o->capacity;
        t->conflict += o->conflict;
        t->true_sharing += o->true_sharing;
        t->false_sharing += o->false_sharing;
        t->d1_writebacks += o->d1_writebacks;
        t->memory_writebacks += o->memory_writebacks;
    }
}

/* The fields' names, while the objects are in the order the walk made
 * them (their keys name them by index); 0, or -1 when out of memory. */
static int name_fields(sim *s)
{
    char **names = malloc((s->nobjects ? s->nobjects : 1) * sizeof *names);
    if (!names)
        return -1;
    for (size_t i = 0; i < s->nobjects; i++)
        names[i] = s->objects[i].name;
    int rc = cachesim_fields_name(s->fields, s->nfields, names, s->sym, s->names,
                                  &s->named_fields, &s->nnamed_fields);
    free(names);
    return rc;
}

/* What a followed trace's file gained: its new modules and maps, if any,
 * go into the names (and the names kept go); 0, or 1 when out of
 * memory. */
static int follow_names(sim *s)
{
    int rc = trace_follow_update(s->follow);
    if (rc > 0) /* the file grew: maybe by modules or maps */
        rc = namer_refresh(s->names);
    if (rc < 0)
        return 1;
    s->gen += (uint64_t)rc; /* the names kept by address go too */
    if (rc > 0) /* and those of sites (a module came) */
        index_free(&s->by_site);
    return 0;
}

/* The run's clock (the tool's, trace/tool.h): its records' times. */
static void sim_time(void *self, const trace_clock *clock)
{
    sim *s = self;
    s->timeline.clock = *clock;
}

/* Each bin twice as long: the timeline covers twice the time. */
static void widen(sim *s)
{
    time_bin *b = s->timeline.bins;
    uint32_t n = s->timeline.n;
    for (uint32_t k = 0; k < n; k++) {
        time_bin v = b[k];
        memset(&b[k], 0, sizeof b[k]);
        b[k / 2].accesses += v.accesses;
        b[k / 2].d1 += v.d1;
        b[k / 2].ll += v.ll;
    }
    s->timeline.n = (n + 1) / 2;
    s->timeline.width *= 2;
}

/* Record i of the run (n records) and those after it up to the one
 * returned go into the bin of record i's time. */
static size_t time_bin_at(sim *s, size_t i, size_t n)
{
    const trace_clock *c = &s->timeline.clock;
    uint64_t t = trace_clock_at(c, i);
    while (t / s->timeline.width >= TIME_BINS)
        widen(s);
    uint64_t b = t / s->timeline.width;
    if (b >= s->timeline.n)
        s->timeline.n = (uint32_t)b + 1;
    s->timeline.at = &s->timeline.bins[b];
    if (!c->span)
        return n;
    /* the first record at the next bin's time or later: span * (at + j +
     * 1) / of >= next - from */
    uint64_t next = (b + 1) * s->timeline.width - c->from;
    uint64_t j = (next * c->of + c->span - 1) / c->span;
    j = j > c->at + 1 ? j - c->at - 1 : 0;
    return j > i ? (j < n ? j : n) : i + 1;
}

/* One run of records (the tool's, trace/tool.h). */
static int sim_run(void *self, const memtap_record *recs, size_t n, uint32_t tid)
{
    sim *s = self;
    if (s->follow && s->attribute && follow_names(s))
        return 1;
    s->timeline.at = NULL;
    int64_t ti = n ? thread_of(s, tid) : 0;
    if (ti < 0)
        return 1;
    for (size_t i = 0, change = s->timeline.clock.of ? 0 : n; i < n; i++) {
        if (i == change)
            change = time_bin_at(s, i, n);
        if (sim_record(s, &recs[i], tid, (size_t)ti, NULL))
            return 1;
    }
    return 0;
}

/* A model with opt's geometry; with sym, it names what it counts. */
static sim *sim_create(const cachesim_options *opt, symbolizer *sym)
{
    sim *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->opt = *opt;
    s->attribute = sym != NULL;
    s->gen = 1;
    s->timeline.width = 1024;
    s->line_shift = (unsigned)__builtin_ctz(opt->d1.line);
    s->d1_lines = (uint32_t)(opt->d1.size / opt->d1.line);
    s->sym = sym;
    reuse_clock_init(&s->clock, s->d1_lines);
    int ok = cache_level_init(&s->ll, &opt->ll) == 0;
    if (ok && sym)
        ok = (s->names = namer_create(sym, 0)) && (s->recent = calloc(ADDR_CACHE,
                                                                      sizeof *s->recent));
    else if (ok) /* one object: every access */
        ok = array_push((void **)&s->objects, &s->nobjects, &s->objects_cap,
                        sizeof *s->objects) != NULL;
    if (!ok) {
        cachesim_destroy(s);
        return NULL;
    }
    return s;
}

cachesim *cachesim_create(const cache_geometry *d1, const cache_geometry *ll)
{
    cachesim_options opt = { *d1, *ll, 0, 0, NULL, 0, NULL };
    return sim_create(&opt, NULL);
}

void cachesim_destroy(cachesim *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nobjects; i++)
        free(s->objects[i].name);
    for (size_t i = 0; i < s->nthreads; i++) {
        cache_level_free(&s->threads[i].d1);
        cache_full_free(&s->threads[i].full);
    }
    free(s->threads);
    free(s->objects);
    free(s->insns);
    free(s->fields);
    index_free(&s->by_field);
    cachesim_fields_free(s->named_fields, s->nnamed_fields);
    free(s->lines);
    free(s->written);
    index_free(&s->by_pc);
    index_free(&s->by_name);
    index_free(&s->by_site);
    index_free(&s->by_tid);
    index_free(&s->taken);
    cache_level_free(&s->ll);
    reuse_clock_free(&s->clock);
    free(s->recent);
    namer_destroy(s->names);
    free(s);
}

int cachesim_report(memtap_trace *t, symbolizer *sym,
                    const cachesim_options *opt, FILE *out)
{
    sim *s = sim_create(opt, sym);
    if (!s)
        return 1;
    s->follow = opt->follow;
    trace_tool tool = { .self = s, .run = sim_run, .learn = sim_learn, .time = sim_time };
    int rc = trace_tools_walk(t, &tool, 1, NULL, NULL);
    if (rc == 0 && s->follow && s->attribute && follow_names(s))
        rc = 1; /* (the instructions are named after the walk) */
    if (rc == 0 && name_fields(s) != 0)
        rc = 1;
    sum_objects(s);
    char err[128];
    if (rc == 0 && opt->json == CACHESIM_PAGE)
        rc = page_write_data(out, PAGE_CACHESIM, print_json, s, err, sizeof err) ? 1 : 0;
    else if (rc == 0 && opt->json)
        print_json(s, out);
    else if (rc == 0)
        print_report(s, opt, out);
    cachesim_destroy(s);
    return rc;
}
