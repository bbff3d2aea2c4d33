/*
 * profile.c - builds a report's profile (profile.h) in one walk over a
 * trace, and its heatmaps in a second: the heap as it was at each event
 * (heapmap.h) names heap addresses by allocation site, the symbolizer the
 * others (cached per address).
 *
 * One file: the two walks share the builder and its caches.
 */
#include "report/profile.h"
#include "sys/page.h"

#include "report/index.h"
#include "report/parent.h"
#include "sys/vec.h"
#include "symbols/symbolizer.h"
#include "trace/tool.h"
#include "symbols/heapmap.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define NAME_CAP 512
#define ADDR_CACHE 4096u

typedef struct addr_slot {
    uint64_t addr;
    uint32_t object_plus1;  /* 0: empty */
} addr_slot;

#define PAGE_CHUNKS (PAGE / PROFILE_CHUNK)

/* The chunks of one page: their index in the builder's chunks + 1 (0: not
 * touched yet) and their accesses so far.  A page is small and hot where
 * one hash table of millions of chunks would miss the cache at every
 * access (a linked structure's walk: 26 M accesses took 4 s). */
typedef struct chunk_page {
    uint64_t page;           /* its number (address / PAGE) */
    int heap;                /* an access in a heap block starts in it */
    uint32_t chunk_plus1[PAGE_CHUNKS];
    uint64_t accesses[PAGE_CHUNKS];
    /* each chunk's vote for the object most of its accesses go to (a
     * majority vote: the winner when one object has more than half), and
     * an address of the winner's, which names a chunk of static data */
    uint32_t vote_object[PAGE_CHUNKS], vote_count[PAGE_CHUNKS];
    uint64_t vote_addr[PAGE_CHUNKS];
} chunk_page;

/* Which threads touched and wrote one heap block (bits as
 * profile_object.threads). */
typedef struct block_share {
    uint64_t threads, writers;
} block_share;

typedef struct builder {
    symbolizer *sym;
    heap_map *heap;
    index_map by_name, by_site, by_pc, by_tid, by_chunk_page;
    index_map by_block;     /* block number -> its block_share */
    block_share *shares;
    size_t nshares, shares_cap;
    profile_chunk *chunks;  /* every chunk touched */
    size_t nchunks, chunks_cap;
    chunk_page *chunk_pages; /* by_chunk_page's values */
    size_t nchunk_pages, chunk_pages_cap;
    uint64_t last_chunk_page; /* the page of the last access, + 1 */
    size_t last_chunk_page_index;
    addr_slot *cache;
    uint64_t span_lo, span_hi; /* the last variable's range (data_name's */
    uint32_t span_object;      /* end) and its object */
    size_t objects_cap, insns_cap, threads_cap;
    uint64_t last_alloc;    /* block number of the latest allocation + 1 */
    uint32_t stack_of, stack; /* stack_key's last answer: the call stack
                                 id, and its key */
    uint64_t inherited;     /* blocks numbered below: a parent's (fork) */
    uint64_t total, ordinal;
    trace_clock clock;      /* when the run being walked was made */
    uint64_t now;           /* ... and its record being walked */
    uint16_t bin;           /* the span of the event being walked */
    uint32_t *rank;         /* an object's place once sorted */
    size_t nranked;         /* objects the rank covers */
    uint64_t *page_list;    /* touched heap pages, sorted (heatmap rows) */
    size_t npages;
} builder;

const char *profile_pattern_name(profile_pattern pattern)
{
    static const char *const names[] = { "-", "same address", "sequential",
                                         "strided", "random", "block to block" };
    return names[pattern];
}

static int64_t new_object(profile *p, builder *b, const char *name,
                          const char *region)
{
    profile_object *o = array_push((void **)&p->objects, &p->nobjects,
                                 &b->objects_cap, sizeof *o);
    if (!o)
        return -1;
    o->name = strdup(name);
    o->region = region;
    o->lo = UINT64_MAX;
    o->hot = -1;
    return o->name ? (int64_t)(p->nobjects - 1) : -1;
}

static int mapping_block(const heap_block *blk)
{
    return blk->kind == MEMTAP_EV_MMAP || blk->kind == MEMTAP_EV_MREMAP;
}

/* The object of a heap block: its allocation site. */
static int64_t site_object(profile *p, builder *b, const heap_block *blk)
{
    int mapping = mapping_block(blk);
    uint64_t key = blk->site ^ ((uint64_t)mapping << 63);
    int64_t i = index_get(&b->by_site, key);
    if (i >= 0)
        return i;
    char name[NAME_CAP];
    symbolizer_site_text(b->sym, blk, name, sizeof name);
    i = new_object(p, b, name, mapping ? "[mmap]" : "[heap]");
    if (i < 0 || index_put(&b->by_site, key, (uint32_t)i) != 0)
        return -1;
    p->objects[i].heap = 1;
    p->objects[i].site = blk->site;
    return i;
}

/* The object of a data address outside the heap blocks: the variable or
 * section `memtap show` names it after, else its region. */
static int64_t data_object(profile *p, builder *b, uint64_t addr)
{
    if (addr - b->span_lo < b->span_hi - b->span_lo)
        return b->span_object; /* an array's elements, one after another */
    addr_slot *slot = &b->cache[(addr ^ (addr >> 12)) % ADDR_CACHE];
    if (slot->object_plus1 && slot->addr == addr)
        return slot->object_plus1 - 1;
    data_name d;
    char object[NAME_CAP];
    symbolizer_data(b->sym, addr, &d);
    symbolizer_object_text(&d, object, sizeof object);
    const char *region = d.region;
    int64_t i = index_get_str(&b->by_name, object);
    if (i < 0) {
        i = new_object(p, b, object, region);
        if (i < 0 || index_put_str(&b->by_name, object, (uint32_t)i) != 0)
            return -1;
    }
    slot->addr = addr;
    slot->object_plus1 = (uint32_t)i + 1;
    if (d.end) {
        b->span_lo = d.start;
        b->span_hi = d.end;
        b->span_object = (uint32_t)i;
    }
    return i;
}

/* Which object addr is in, with the heap block holding it (NULL
 * outside the heap); -1 when out of memory. */
static int64_t object_at(profile *p, builder *b, uint64_t addr,
                         const heap_block **blk)
{
    *blk = heap_map_find(b->heap, addr);
    if (*blk && ((*blk)->flags & MEMTAP_RF_BRK))
        *blk = NULL; /* the allocator's own growth, not a block */
    return *blk ? site_object(p, b, *blk) : data_object(p, b, addr);
}

/* One access of instruction x to object o at addr (its offset in a heap
 * block); o's walk counts how far x moved since its access before. */
static void walk_step(profile_walk *w, profile_step *x, uint32_t object,
                      uint64_t addr, uint64_t size, uint64_t block)
{
    if (x->valid && x->object == object && x->block != block) {
        w->hops++;
    } else if (x->valid && x->object == object) {
        int64_t d = (int64_t)(addr - x->addr);
        if (d == 0) {
            w->same++;
        } else {
            w->moves++;
            if ((uint64_t)(d < 0 ? -d : d) == x->size)
                w->sequential++;
            else if (d == x->delta)
                w->strided++;
            x->delta = d;
            int k, empty = -1;
            for (k = 0; k < 4 && w->cand[k] != d; k++)
                if (!w->cand_n[k] && empty < 0)
                    empty = k;
            if (k < 4 && w->cand_n[k])
                w->cand_n[k]++;
            else if (empty >= 0)
                w->cand[empty] = d, w->cand_n[empty] = 1;
            else
                for (k = 0; k < 4; k++)
                    w->cand_n[k]--;
        }
    }
    *x = (profile_step){ addr, size, block, x->delta, object, 1 };
}

static void classify(profile_object *o)
{
    const profile_walk *w = &o->walk;
    uint64_t all = w->moves + w->same;
    if (w->hops * 10 >= (all + w->hops) * 6 && w->hops)
        o->pattern = PATTERN_LINKED;
    else if (all == 0)
        o->pattern = PATTERN_NONE;
    else if (w->same * 10 >= all * 9)
        o->pattern = PATTERN_SAME;
    else if (w->sequential * 10 >= w->moves * 6)
        o->pattern = PATTERN_SEQUENTIAL;
    else if ((w->sequential + w->strided) * 10 >= w->moves * 6) {
        o->pattern = PATTERN_STRIDED;
        int best = 0;
        for (int k = 1; k < 4; k++)
            if (w->cand_n[k] > w->cand_n[best])
                best = k;
        o->stride = w->cand[best];
    } else
        o->pattern = PATTERN_RANDOM;
}

static int64_t thread_index(profile *p, builder *b, uint32_t tid)
{
    int64_t i = index_get(&b->by_tid, tid);
    if (i >= 0)
        return i;
    profile_thread *th = array_push((void **)&p->threads, &p->nthreads,
                                  &b->threads_cap, sizeof *th);
    if (!th)
        return -1;
    th->tid = tid;
    i = (int64_t)p->nthreads - 1;
    return index_put(&b->by_tid, tid, (uint32_t)i) == 0 ? i : -1;
}

static profile_insn *insn_at(profile *p, builder *b, uint64_t pc)
{
    int64_t i = index_get(&b->by_pc, pc);
    if (i >= 0)
        return &p->insns[i];
    profile_insn *x = array_push((void **)&p->insns, &p->ninsns, &b->insns_cap,
                               sizeof *x);
    if (!x || index_put(&b->by_pc, pc, (uint32_t)(p->ninsns - 1)) != 0)
        return NULL;
    x->pc = pc;
    return x;
}

/* The chunk page of page number `page`, added on first use; NULL when out
 * of memory.  Valid until the next one is added. */
static chunk_page *chunk_page_of(builder *b, uint64_t page)
{
    if (page + 1 == b->last_chunk_page)
        return &b->chunk_pages[b->last_chunk_page_index];
    int64_t i = index_get(&b->by_chunk_page, page);
    if (i < 0) {
        if (!array_push((void **)&b->chunk_pages, &b->nchunk_pages,
                        &b->chunk_pages_cap, sizeof *b->chunk_pages) ||
            index_put(&b->by_chunk_page, page, (uint32_t)(b->nchunk_pages - 1)))
            return NULL;
        i = (int64_t)b->nchunk_pages - 1;
        b->chunk_pages[i].page = page;
    }
    b->last_chunk_page = page + 1;
    b->last_chunk_page_index = (size_t)i;
    return &b->chunk_pages[i];
}

/* Counts an access in each chunk it touches (blk: the heap block it is
 * in, or NULL). */
static int count_chunks(builder *b, uint64_t addr, uint64_t size,
                        uint32_t object, const heap_block *blk)
{
    uint64_t first = addr / PROFILE_CHUNK;
    uint64_t last = (addr + (size ? size : 1) - 1) / PROFILE_CHUNK;
    for (uint64_t c = first; c <= last; c++) {
        chunk_page *cp = chunk_page_of(b, c / PAGE_CHUNKS);
        if (!cp)
            return -1;
        if (c == first && blk)
            cp->heap = 1;
        uint32_t *slot = &cp->chunk_plus1[c % PAGE_CHUNKS];
        if (!*slot) {
            profile_chunk *k = array_push((void **)&b->chunks, &b->nchunks,
                                        &b->chunks_cap, sizeof *k);
            if (!k)
                return -1;
            uint64_t at = c * PROFILE_CHUNK;
            *k = (profile_chunk){ .addr = at, .object = object,
                                  .offset = blk && at >= blk->start ? at - blk->start : 0 };
            *slot = (uint32_t)b->nchunks;
        }
        unsigned k = c % PAGE_CHUNKS;
        cp->accesses[k]++;
        if (cp->vote_count[k] && cp->vote_object[k] != object) {
            cp->vote_count[k]--;
        } else if (!cp->vote_count[k]++) {
            cp->vote_object[k] = object;
            cp->vote_addr[k] = addr > c * PROFILE_CHUNK ? addr : c * PROFILE_CHUNK;
        }
    }
    return 0;
}

/* The chunks' access counts, from their pages. */
static void gather_chunk_counts(builder *b)
{
    for (size_t i = 0; i < b->nchunk_pages; i++)
        for (size_t k = 0; k < PAGE_CHUNKS; k++)
            if (b->chunk_pages[i].chunk_plus1[k]) {
                profile_chunk *c = &b->chunks[b->chunk_pages[i].chunk_plus1[k] - 1];
                c->accesses = b->chunk_pages[i].accesses[k];
                c->hot_addr = b->chunk_pages[i].vote_addr[k];
            }
}

/* Thread bit `bit` touches (writes) heap block blk of object o: o's
 * per-block truth.  0, or -1 when out of memory. */
static int share_block(builder *b, profile_object *o, const heap_block *blk,
                       uint64_t bit, int write)
{
    int made;
    uint32_t *i = index_value(&b->by_block, blk->id, &made);
    if (!i)
        return -1;
    if (made) {
        if (!array_push((void **)&b->shares, &b->nshares, &b->shares_cap,
                        sizeof *b->shares))
            return -1;
        *i = (uint32_t)(b->nshares - 1);
    }
    block_share *s = &b->shares[*i];
    int was_shared = __builtin_popcountll(s->threads) >= 2;
    s->threads |= bit;
    if (write)
        s->writers |= bit;
    uint32_t threads = (uint32_t)__builtin_popcountll(s->threads);
    uint32_t writers = (uint32_t)__builtin_popcountll(s->writers);
    o->shared_blocks += !was_shared && threads >= 2;
    o->block_threads = threads > o->block_threads ? threads : o->block_threads;
    o->block_writers = writers > o->block_writers ? writers : o->block_writers;
    return 0;
}

/* Counts an access at offset `at` of one of heap site o's blocks (blk) in
 * the site's field map; 0, or -1 out of memory. */
static int count_field(profile_object *o, const heap_block *blk, uint64_t at,
                       uint64_t size, int write, uint64_t thread_bit,
                       uint16_t bin)
{
    if (o->no_fields)
        return 0;
    if (blk->size > PROFILE_FIELD_BLOCK || at + size > blk->size) {
        o->no_fields = 1;
        return 0;
    }
    if (blk->size > o->block_size)
        o->block_size = blk->size;
    uint32_t i = o->last_field;
    if (i >= o->nfields || o->fields[i].offset != at || o->fields[i].size != size)
        for (i = 0; i < o->nfields; i++)
            if (o->fields[i].offset == at && o->fields[i].size == size)
                break;
    if (i == o->nfields) {
        if (o->nfields == PROFILE_FIELDS) {
            o->no_fields = 1;
            return 0;
        }
        if (!o->fields && !(o->fields = calloc(PROFILE_FIELDS, sizeof *o->fields)))
            return -1;
        o->fields[o->nfields++] = (profile_field){ .offset = (uint32_t)at,
                                                   .size = (uint32_t)size,
                                                   .first_bin = bin };
    }
    o->last_field = i;
    *(write ? &o->fields[i].stores : &o->fields[i].loads) += 1;
    o->fields[i].threads |= thread_bit;
    o->fields[i].last_bin = bin;
    return 0;
}

/* One key per distinct stack, the last block's kept: asked per access. */
static uint32_t stack_key(builder *b, const heap_block *blk)
{
    if (blk->stack != b->stack_of) {
        b->stack_of = blk->stack;
        b->stack = b->sym ? symbolizer_stack_key(b->sym, blk->stack) : 0;
    }
    return b->stack;
}

/* One access of `kind` to [addr, addr+size) by thread th. */

static int touch(profile *p, builder *b, int kind, int write, uint64_t addr,
                 uint64_t size, int64_t th, profile_insn *x)
{
    const heap_block *blk;
    int64_t i = object_at(p, b, addr, &blk);
    if (i < 0)
        return -1;
    profile_object *o = &p->objects[i];
    o->n[kind]++;
    o->accesses++;
    *(write ? &o->bytes_written : &o->bytes_read) += size;
    uint64_t bit = th < 64 ? 1ull << th : 0;
    o->threads |= bit;
    if (write)
        o->writers |= bit;
    /* (a freed block's accesses are the allocator's: no sharing) */
    if (blk && !blk->released && share_block(b, o, blk, bit, write) != 0)
        return -1;
    if (blk)
        heap_stacks_touch(&p->stacks, stack_key(b, blk));
    uint64_t at = blk ? addr - blk->start : addr;
    if (at < o->lo)
        o->lo = at;
    if (at + size > o->hi)
        o->hi = at + size;
    walk_step(&o->walk, &x->last, (uint32_t)i, at, size, blk ? blk->id : 0);
    if (blk && blk->released) {
        o->uaf++;
        x->uaf++;
        p->uaf++;
    } else if (blk && (kind == PROF_L || kind == PROF_S) &&
               count_field(o, blk, at, size, write, bit, b->bin) != 0) {
        return -1;
    }
    x->object = (uint32_t)i;
    return count_chunks(b, addr, size, (uint32_t)i, blk);
}

static int kind_of(uint8_t k)
{
    switch (k) {
    case MEMTAP_EV_LOAD: return PROF_L;
    case MEMTAP_EV_STORE: return PROF_S;
    case MEMTAP_EV_COPY: return PROF_Y;
    case MEMTAP_EV_BLOCK_STORE: return PROF_W;
    case MEMTAP_EV_BLOCK_FETCH: return PROF_G;
    default: return -1;
    }
}

/* An access of kind k by thread th (its profile index). */
static int add_access(profile *p, builder *b, const memtap_event *ev, int k,
                      int64_t th, profile_bin *bin)
{
    const memtap_record *r = &ev->rec;
    profile_insn *x = insn_at(p, b, r->pc);
    if (!x)
        return -1;
    p->threads[th].accesses++;
    if (th < PROFILE_BIN_THREADS)
        bin->thread_n[th]++;
    x->n[k]++;
    x->accesses++;
    p->n[k]++;
    p->accesses++;
    bin->n[k]++;
    if (k == PROF_Y)
        return touch(p, b, k, 1, r->addr, r->size, th, x) ||
               touch(p, b, k, 0, memtap_copy_source(r), r->size, th, x);
    return touch(p, b, k, k == PROF_S || k == PROF_W, r->addr, r->size, th,
                 x);
}

/* The statistics of a heap block coming (sign 1) or going (-1). */
static int account(profile *p, builder *b, const heap_block *blk, int sign)
{
    /* the allocator's growth, and blocks the parent allocated before a
     * fork (their release is not this process's allocation summary) */
    if ((blk->flags & MEMTAP_RF_BRK) || blk->id < b->inherited)
        return 0;
    int64_t i = site_object(p, b, blk);
    if (i < 0)
        return -1;
    profile_object *o = &p->objects[i];
    profile_heap *h = &p->heap;
    int mapping = mapping_block(blk);
    if (sign > 0) {
        o->allocs++;
        o->alloc_bytes += blk->size;
        o->live++;
        o->live_bytes += blk->size;
        if (o->live_bytes > o->peak_bytes)
            o->peak_bytes = o->live_bytes;
        b->last_alloc = blk->id + 1;
        if (mapping) {
            h->mappings++;
            h->mapped_bytes += blk->size;
            return 0;
        }
        h->allocs++;
        h->alloc_bytes += blk->size;
        h->live++;
        h->live_bytes += blk->size;
        int peak = h->live_bytes > h->peak_bytes;
        if (peak) {
            h->peak_bytes = h->live_bytes;
            h->peak_event = b->ordinal;
        }
        return heap_stacks_alloc(&p->stacks, stack_key(b, blk), blk->site,
                                 blk->size, peak);
    }
    o->frees++;
    o->live--;
    o->live_bytes -= blk->size;
    if (mapping)
        return 0;
    h->frees++;
    h->live--;
    h->live_bytes -= blk->size;
    int temporary = b->last_alloc == blk->id + 1; /* none in between */
    o->temporary += temporary;
    h->temporary += temporary;
    heap_stacks_free(&p->stacks, stack_key(b, blk), blk->size, temporary);
    return 0;
}

static int add_heap_event(profile *p, builder *b, const memtap_record *r,
                          profile_bin *bin)
{
    heap_block old;
    if (heap_map_apply(b->heap, r, &old) == 1) {
        if (account(p, b, &old, -1))
            return -1;
        if (!(old.flags & MEMTAP_RF_BRK))
            bin->frees++;
    }
    if (r->kind == MEMTAP_EV_FREE || r->kind == MEMTAP_EV_MUNMAP ||
        (r->flags & MEMTAP_RF_FAILED) || !r->addr)
        return 0;
    const heap_block *blk = heap_map_find(b->heap, r->addr);
    if (!blk || blk->released || blk->start != r->addr)
        return 0;
    if (!(blk->flags & MEMTAP_RF_BRK))
        bin->allocs++;
    return account(p, b, blk, 1);
}

/* The bin of the event being walked: by its time when the trace holds
 * times, else by its place in the trace's order. */
static profile_bin *bin_of(profile *p, builder *b)
{
    uint64_t i = p->duration_us ? b->now * PROFILE_BINS / p->duration_us
                                : b->ordinal * PROFILE_BINS / b->total;
    b->bin = (uint16_t)(i < PROFILE_BINS ? i : PROFILE_BINS - 1);
    return &p->bins[b->bin];
}

/* One event; `learning`: a record the walk's selection leaves out (its
 * access is not counted; the heap and the time line are the whole
 * trace's). */
static int add_event(profile *p, builder *b, const memtap_event *ev,
                     int learning)
{
    profile_bin *bin = bin_of(p, b);
    int64_t th = thread_index(p, b, ev->tid);
    if (th < 0)
        return -1;
    int rc = 0;
    int k = kind_of(ev->rec.kind);
    if (k >= 0 && !learning)
        rc = add_access(p, b, ev, k, th, bin);
    else if (heap_map_kind(ev->rec.kind))
        rc = add_heap_event(p, b, &ev->rec, bin);
    p->threads[th].events++;
    bin->events++;
    bin->live_end = p->heap.live_bytes;
    if (bin->live_end > bin->live_bytes)
        bin->live_bytes = bin->live_end;
    p->events++;
    b->ordinal++;
    return rc;
}

static int by_accesses(const void *a, const void *b)
{
    const profile_object *x = a, *y = b;
    if (x->accesses != y->accesses)
        return x->accesses < y->accesses ? 1 : -1;
    return strcmp(x->name, y->name);
}

static int insn_by_accesses(const void *a, const void *b)
{
    const profile_insn *x = a, *y = b;
    if (x->accesses != y->accesses)
        return x->accesses < y->accesses ? 1 : -1;
    return x->pc < y->pc ? -1 : x->pc > y->pc;
}

static int chunk_by_accesses(const void *a, const void *b)
{
    const profile_chunk *x = a, *y = b;
    if (x->accesses != y->accesses)
        return x->accesses < y->accesses ? 1 : -1;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int by_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int by_offset(const void *a, const void *b)
{
    const profile_field *x = a, *y = b;
    if (x->offset != y->offset)
        return x->offset < y->offset ? -1 : 1;
    return x->size < y->size ? -1 : x->size > y->size;
}

/* The member a path starts with: "[2].key.len" -> "[2].key", "pad+3" ->
 * "pad" (cut in place). */
static char *top_member(char *path)
{
    char *p = path;
    if (*p == '[') { /* an array of the type: keep its index */
        p = strchr(p, ']');
        p = p ? p + 1 + (p[1] == '.') : path + strlen(path);
    }
    p[strcspn(p, ".[+")] = '\0';
    return path;
}

/* The names of what the fields and the untouched bytes of site o's blocks
 * hold, when DWARF gives the blocks' type. */
static void name_fields(builder *b, profile_object *o, const uint8_t *touched)
{
    symbolizer_type t;
    if (!symbolizer_block_type(b->sym, o->site, o->block_size, &t))
        return;
    o->type = strdup(t.name);
    char buf[256], last[256] = "", list[512] = "";
    for (uint32_t i = 0; i < o->nfields; i++)
        if (symbolizer_member(b->sym, &t, o->block_size, o->fields[i].offset, buf, sizeof buf))
            o->fields[i].name = strdup(buf);
    size_t n = 0;
    for (uint64_t k = 0; k < o->block_size; k++) {
        if (touched[k] ||
            !symbolizer_member(b->sym, &t, o->block_size, k, buf, sizeof buf) ||
            !strcmp(top_member(buf), last))
            continue;
        snprintf(last, sizeof last, "%s", buf);
        if (n < sizeof list) /* (a list cut short ends where it was cut) */
            n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", n ? ", " : "", buf);
    }
    if (n)
        o->untouched_members = strdup(list);
}

static void free_fields(profile_object *o)
{
    for (uint32_t i = 0; i < o->nfields; i++)
        free(o->fields[i].name);
    free(o->fields);
    free(o->type);
    free(o->untouched_members);
}

/* A site's fields by offset, and the bytes of its largest block no field
 * covers (no map at all when it is not a record's layout), named when the
 * blocks' type is known. */
static void settle_fields(builder *b, profile_object *o)
{
    if (o->no_fields || !o->nfields) {
        free(o->fields);
        o->fields = NULL;
        o->nfields = 0;
        return;
    }
    qsort(o->fields, o->nfields, sizeof *o->fields, by_offset);
    uint8_t touched[PROFILE_FIELD_BLOCK] = { 0 };
    uint64_t all = 0;
    for (uint32_t i = 0; i < o->nfields; i++) {
        memset(touched + o->fields[i].offset, 1, o->fields[i].size);
        all += o->fields[i].loads + o->fields[i].stores;
    }
    for (uint32_t i = 0; i < o->nfields; i++)
        o->fields[i].hot = (o->fields[i].loads + o->fields[i].stores) * 10 >= all;
    for (uint64_t k = 0; k < o->block_size; k++)
        o->untouched += !touched[k];
    name_fields(b, o, touched);
}

/* Sorts objects and instructions; b->rank maps an object's first index
 * (the builder's indexes hold those) to its sorted one. */
static int finish(profile *p, builder *b)
{
    for (size_t i = 0; i < p->nobjects; i++) {
        settle_fields(b, &p->objects[i]);
        classify(&p->objects[i]);
        p->objects[i].hot = (int)i; /* the first index, for the rank */
        if (p->objects[i].lo == UINT64_MAX)
            p->objects[i].lo = 0;
    }
    if (p->nobjects)
        qsort(p->objects, p->nobjects, sizeof *p->objects, by_accesses);
    b->rank = malloc((p->nobjects + 1) * sizeof *b->rank);
    if (!b->rank)
        return -1;
    b->nranked = p->nobjects;
    for (size_t i = 0; i < p->nobjects; i++) {
        b->rank[p->objects[i].hot] = (uint32_t)i;
        p->objects[i].hot = -1;
    }
    for (size_t i = 0; i < p->ninsns; i++) {
        profile_insn *x = &p->insns[i];
        x->object = b->rank[x->object];
        char buf[NAME_CAP];
        symbolizer_code(b->sym, x->pc, buf, sizeof buf);
        x->name = strdup(buf);
        if (symbolizer_line(b->sym, x->pc, buf, sizeof buf))
            x->line = strdup(buf);
        if (!x->name)
            return -1;
    }
    if (p->ninsns)
        qsort(p->insns, p->ninsns, sizeof *p->insns, insn_by_accesses);
    gather_chunk_counts(b);
    if (b->nchunks)
        qsort(b->chunks, b->nchunks, sizeof *b->chunks, chunk_by_accesses);
    p->nchunks = b->nchunks < PROFILE_CHUNKS ? b->nchunks : PROFILE_CHUNKS;
    p->chunks = calloc(p->nchunks + 1, sizeof *p->chunks);
    if (!p->chunks)
        return -1;
    for (size_t i = 0; i < p->nchunks; i++) {
        profile_chunk *k = &p->chunks[i];
        *k = b->chunks[i];
        k->object = b->rank[k->object];
        const profile_object *o = &p->objects[k->object];
        char name[NAME_CAP];
        if (o->heap) {
            snprintf(name, sizeof name, "%s+%" PRIu64, o->name, k->offset);
        } else {
            data_name d; /* the object most accesses went to, where they did */
            symbolizer_data(b->sym, k->hot_addr, &d);
            symbolizer_data_text(b->sym, &d, name, sizeof name);
        }
        if (!(k->name = strdup(name)))
            return -1;
    }
    /* bins without events hold the heap as the bin before left it */
    for (size_t i = 1; i < PROFILE_BINS; i++)
        if (!p->bins[i].events)
            p->bins[i].live_bytes = p->bins[i].live_end =
                p->bins[i - 1].live_end;
    return 0;
}

static void builder_free(builder *b)
{
    if (!b)
        return;
    heap_map_destroy(b->heap);
    index_free(&b->by_name);
    index_free(&b->by_site);
    index_free(&b->by_block);
    free(b->shares);
    index_free(&b->by_pc);
    index_free(&b->by_tid);
    index_free(&b->by_chunk_page);
    free(b->chunk_pages);
    free(b->chunks);
    free(b->cache);
    free(b->rank);
    free(b->page_list);
    free(b);
}

static void learn(void *state, const memtap_event *ev)
{
    builder *b = state;
    heap_map_apply(b->heap, &ev->rec, NULL);
    if (heap_map_kind(ev->rec.kind) && ev->rec.aux >= b->inherited)
        b->inherited = ev->rec.aux + 1;
}

/* Ready for a walk from the start: the heap as the process began with it
 * (a forked child's, its parent's blocks). */
static int builder_reset(builder *b, const memtap_trace *t)
{
    heap_map_destroy(b->heap);
    b->heap = heap_map_create();
    symbolizer_name_sites(b->sym, b->heap);
    b->inherited = 0;
    if (b->heap)
        parent_replay(t, learn, b); /* unreadable: warned by show */
    b->total = memtap_trace_get_health(t)->events;
    if (!b->total)
        b->total = 1;
    b->ordinal = 0;
    b->last_alloc = 0;
    b->now = 0;
    memset(&b->clock, 0, sizeof b->clock);
    return b->heap ? 0 : -1;
}

/* The time of record i of the run being walked. */
static void at_record(builder *b, size_t i)
{
    if (b->clock.of)
        b->now = trace_clock_at(&b->clock, i);
}

/* add_event for each of n records of thread tid: 0, or -1 when out of
 * memory. */
static int add_run(profile *p, builder *b, const memtap_record *recs,
                   size_t n, uint32_t tid, int learning,
                   void (*progress)(void *), void *arg)
{
    for (size_t i = 0; i < n; i++) {
        memtap_event ev = { recs[i], tid };
        at_record(b, i);
        if (add_event(p, b, &ev, learning) != 0)
            return -1;
        if (progress)
            progress(arg);
    }
    return 0;
}

/* The profile's walks as tools of the offline interface (trace/tool.h). */
typedef struct build_walk {
    profile *p;
    builder *b;
    void (*progress)(void *);
    void *arg;
} build_walk;

static int build_run(void *self, const memtap_record *recs, size_t n,
                     uint32_t tid)
{
    build_walk *w = self;
    return add_run(w->p, w->b, recs, n, tid, 0, w->progress, w->arg) != 0
               ? MEMTAP_E_NOMEM : 0;
}

static int build_learn(void *self, const memtap_record *recs, size_t n,
                       uint32_t tid)
{
    build_walk *w = self;
    return add_run(w->p, w->b, recs, n, tid, 1, w->progress, w->arg) != 0
               ? MEMTAP_E_NOMEM : 0;
}

/* When the next run's records were made (trace/tool.h). */
static void walk_time(void *self, const trace_clock *clock)
{
    ((build_walk *)self)->b->clock = *clock;
}

static int build_finish(void *self, int status)
{
    build_walk *w = self;
    if (status == 0 && (finish(w->p, w->b) != 0 ||
                        heap_stacks_finish(&w->p->stacks, w->b->sym)))
        return MEMTAP_E_NOMEM;
    return status;
}

int profile_build(profile *p, memtap_trace *t, symbolizer *sym,
                  void (*progress)(void *), void *arg)
{
    memset(p, 0, sizeof *p);
    builder *b = calloc(1, sizeof *b);
    p->state = b;
    if (b)
        b->sym = sym;
    if (!b || !(b->cache = calloc(ADDR_CACHE, sizeof *b->cache)) ||
        builder_reset(b, t) != 0) {
        profile_free(p);
        return MEMTAP_E_NOMEM;
    }
    build_walk bw = { p, b, progress, arg };
    p->duration_us = memtap_trace_duration_us(t);
    trace_tool tool = { .self = &bw, .run = build_run, .finish = build_finish,
                        .learn = build_learn, .time = walk_time };
    int rc = trace_tools_walk(t, &tool, 1, NULL, NULL);
    if (rc != 0)
        profile_free(p);
    return rc < 0 ? rc : MEMTAP_OK;
}

/* Rows of an object's heatmap: its touched span cut in as many equal
 * parts, a power of two bytes each (cache lines stay whole), as make at
 * most PROFILE_ROWS. */
/* Names the rows of a static object's heatmap after their first bytes
 * ("counters[3]", "config.limits[1].lo"); 0, or -1 out of memory. */
static int name_rows(profile_heatmap *m, symbolizer *sym)
{
    for (uint32_t r = 0; r < m->rows; r++) {
        char name[NAME_CAP];
        data_name d;
        symbolizer_data(sym, m->row_lo[r], &d);
        symbolizer_data_text(sym, &d, name, sizeof name);
        if (!(m->row_name[r] = strdup(name)))
            return -1;
    }
    return 0;
}

static void object_rows(profile_heatmap *m, const profile_object *o)
{
    uint64_t step = 1;
    while ((o->hi - (o->lo & ~(step - 1)) + step - 1) / step > PROFILE_ROWS)
        step *= 2;
    uint64_t lo = o->lo & ~(step - 1);
    uint64_t rows = o->hi > lo ? (o->hi - lo + step - 1) / step : 1;
    m->rows = (uint32_t)rows;
    for (uint32_t r = 0; r < m->rows; r++) {
        m->row_lo[r] = lo + r * step;
        m->row_hi[r] = lo + (r + 1) * step;
    }
}

/* Rows of the heap's heatmap: its touched pages in address order, as many
 * to a row as make PROFILE_ROWS rows (unused address space left out). */
static int heap_rows(profile_heatmap *m, builder *b)
{
    b->page_list = malloc((b->nchunk_pages + 1) * sizeof *b->page_list);
    if (!b->page_list)
        return -1;
    b->npages = 0;
    for (size_t i = 0; i < b->nchunk_pages; i++)
        if (b->chunk_pages[i].heap)
            b->page_list[b->npages++] = b->chunk_pages[i].page;
    if (b->npages)
        qsort(b->page_list, b->npages, sizeof *b->page_list, by_u64);
    size_t n = b->npages;
    m->rows = n < PROFILE_ROWS ? (uint32_t)n : PROFILE_ROWS;
    for (uint32_t r = 0; r < m->rows; r++) {
        m->row_lo[r] = b->page_list[r * n / m->rows] * PAGE;
        m->row_hi[r] = (b->page_list[(r + 1) * n / m->rows - 1] + 1) * PAGE;
    }
    return 0;
}

static void count_cell(profile_heatmap *m, uint64_t at, size_t bin)
{
    uint32_t lo = 0, hi = m->rows; /* the last row starting at or below */
    while (hi - lo > 1) {
        uint32_t mid = (lo + hi) / 2;
        if (m->row_lo[mid] <= at)
            lo = mid;
        else
            hi = mid;
    }
    if (m->rows && at >= m->row_lo[lo] && at < m->row_hi[lo])
        m->cells[lo][bin]++;
}

static int heat_touch(profile *p, builder *b, uint64_t addr, size_t bin)
{
    const heap_block *blk;
    int64_t i = object_at(p, b, addr, &blk);
    if (i < 0)
        return -1;
    if ((size_t)i >= b->nranked) /* one the first walk did not see */
        return 0;
    if (blk)
        count_cell(&p->maps[0], addr, bin);
    const profile_object *o = &p->objects[b->rank[i]];
    if (o->hot >= 0)
        count_cell(&p->maps[o->hot], blk ? addr - blk->start : addr, bin);
    return 0;
}

/* The heatmaps' counts of n records: 0, or -1 when out of memory. */
static int heat_run(profile *p, builder *b, const memtap_record *recs,
                    size_t n, int learning, void (*progress)(void *), void *arg)
{
    for (size_t i = 0; i < n; i++) {
        const memtap_record *r = &recs[i];
        at_record(b, i);
        size_t bin = (size_t)(bin_of(p, b) - p->bins);
        int k = kind_of(r->kind);
        if (k >= 0 && !learning) {
            if (heat_touch(p, b, r->addr, bin) ||
                (k == PROF_Y && heat_touch(p, b, memtap_copy_source(r), bin)))
                return -1;
        } else if (k < 0 && heap_map_kind(r->kind)) {
            heap_map_apply(b->heap, r, NULL);
        }
        b->ordinal++;
        if (progress)
            progress(arg);
    }
    return 0;
}

static int heat_tool_run(void *self, const memtap_record *recs, size_t n,
                         uint32_t tid)
{
    (void)tid;
    build_walk *w = self;
    return heat_run(w->p, w->b, recs, n, 0, w->progress, w->arg) != 0
               ? MEMTAP_E_NOMEM : 0;
}

static int heat_tool_learn(void *self, const memtap_record *recs, size_t n,
                           uint32_t tid)
{
    (void)tid;
    build_walk *w = self;
    return heat_run(w->p, w->b, recs, n, 1, w->progress, w->arg) != 0
               ? MEMTAP_E_NOMEM : 0;
}

int profile_heatmaps(profile *p, memtap_trace *t,
                     void (*progress)(void *), void *arg)
{
    builder *b = p->state;
    size_t hot = 0;
    while (hot < PROFILE_HOT && hot < p->nobjects &&
           p->objects[hot].accesses)
        hot++;
    p->maps = calloc(hot + 1, sizeof *p->maps);
    if (!p->maps || builder_reset(b, t) != 0 || heap_rows(&p->maps[0], b))
        return MEMTAP_E_NOMEM;
    p->nmaps = hot + 1;
    p->maps[0].object = -1;
    for (size_t i = 0; i < hot; i++) {
        p->objects[i].hot = (int)i + 1;
        p->maps[i + 1].object = (int)i;
        object_rows(&p->maps[i + 1], &p->objects[i]);
        if (!p->objects[i].heap && b->sym && name_rows(&p->maps[i + 1], b->sym))
            return MEMTAP_E_NOMEM;
    }
    build_walk hw = { p, b, progress, arg };
    trace_tool tool = { .self = &hw, .run = heat_tool_run, .learn = heat_tool_learn,
                        .time = walk_time };
    int rc = trace_tools_walk(t, &tool, 1, NULL, NULL);
    return rc < 0 ? rc : MEMTAP_OK;
}

void profile_free(profile *p)
{
    for (size_t i = 0; i < p->nobjects; i++) {
        free(p->objects[i].name);
        free_fields(&p->objects[i]);
    }
    for (size_t i = 0; i < p->ninsns; i++) {
        free(p->insns[i].name);
        free(p->insns[i].line);
    }
    free(p->objects);
    free(p->insns);
    free(p->threads);
    for (size_t i = 0; i < p->nmaps; i++)
        for (uint32_t r = 0; r < p->maps[i].rows; r++)
            free(p->maps[i].row_name[r]);
    free(p->maps);
    for (size_t i = 0; i < p->nchunks; i++)
        free(p->chunks[i].name);
    free(p->chunks);
    heap_stacks_release(&p->stacks);
    builder_free(p->state);
    memset(p, 0, sizeof *p);
}
