/*
 * export_rows.c - the rows of the database exports (export_rows.h).  Live
 * blocks wait in a table keyed by address until their release (free,
 * realloc, munmap of a range of mappings) completes their row.
 */
#include "report/export_rows.h"
#include "trace/tool.h"

#include "report/cachesim.h"
#include "report/index.h"
#include "report/render.h"
#include "symbols/namer.h"
#include "sys/vec.h"

#include <stdlib.h>
#include <string.h>

#define NAME_CAP 1024

typedef struct live_block {
    export_block row;
    char *site_name;
    int used;
} live_block;

#define SITE_CACHE 256u          /* site names kept, direct-mapped */
#define FUNCTION_CACHE 1024u     /* functions by instruction, direct-mapped */
#define KEPT_NAME 256u

/* A name kept under a key of the caller's (an allocation site's, an
 * instruction's; 0: none). */
typedef struct kept_name {
    uint64_t key;
    char name[KEPT_NAME];
} kept_name;

#define SECTION_KEYS 64u        /* sections' names by module, direct-mapped */
#define SECTION_KEPT 64u

/* A module's section's name ("libc.so.6:.bss"): the two parts the
 * symbolizer keeps, the number given them (export_access.object_key)
 * and the name made of them ("" when longer than kept). */
typedef struct section_key {
    const char *module, *section;
    uint64_t key;
    char name[SECTION_KEPT];
} section_key;

typedef struct walk {
    const export_sink *sink;
    cachesim *cache;          /* or NULL */
    symbolizer *sym;
    namer *names;
    kept_name *sites;         /* SITE_CACHE slots */
    kept_name *functions;     /* FUNCTION_CACHE slots */
    section_key sections[SECTION_KEYS];
    uint64_t section_keys;    /* numbers given so far */
    live_block *blocks;       /* slots; unused ones are on the free list */
    size_t nblocks, blocks_cap;
    uint32_t *free_slots;
    size_t nfree;
    index_map by_address;     /* live block address -> slot */
    export_thread *threads;
    size_t nthreads, threads_cap;
    index_map by_tid;
    index_map stacks;         /* the call stacks blocks name, as keys */
    char *err;
    size_t errcap;
    void (*progress)(void *);     /* per event, with parg */
    void *parg;
    int failed;                   /* add_event's error, which ended the walk */
} walk;

static int oom(walk *w)
{
    snprintf(w->err, w->errcap, "out of memory");
    return -1;
}

static int count_thread(walk *w, uint32_t tid, uint64_t seq)
{
    int64_t i = index_get(&w->by_tid, tid);
    if (i < 0) {
        export_thread *t = array_push((void **)&w->threads, &w->nthreads,
                                      &w->threads_cap, sizeof *t);
        if (!t || index_put(&w->by_tid, tid, (uint32_t)(w->nthreads - 1)))
            return oom(w);
        *t = (export_thread){ tid, seq, seq, 0 };
        i = (int64_t)w->nthreads - 1;
    }
    w->threads[i].last_seq = seq;
    w->threads[i].events++;
    return 0;
}

/* The name of heap block b's allocation site, kept per site. */
static uint64_t site_key(const heap_block *b)
{
    return (b->site ^ (uint64_t)b->kind << 56) | 1; /* (never 0) */
}

/* name, kept in slot under key when it fits; the copy kept, or name. */
static const char *keep(kept_name *slot, uint64_t key, const char *name)
{
    size_t n = strlen(name);
    if (n >= sizeof slot->name)
        return name;
    slot->key = key;
    memcpy(slot->name, name, n + 1);
    return slot->name;
}

static const char *site_of(walk *w, const heap_block *b, char *buf, size_t cap)
{
    uint64_t key = site_key(b);
    kept_name *slot = &w->sites[(key ^ key >> 17) % SITE_CACHE];
    if (slot->key == key)
        return slot->name;
    symbolizer_site_text(w->sym, b, buf, cap);
    return keep(slot, key, buf);
}

/* The function of the instruction at pc ("main"): namer_code's name
 * without its offset, in buf or kept per instruction. */
static const char *function_of(walk *w, uint64_t pc, char *buf, size_t cap)
{
    kept_name *slot = &w->functions[(pc ^ pc >> 12) % FUNCTION_CACHE];
    if (slot->key == pc + 1)
        return slot->name;
    char code[NAME_CAP];
    const char *fn = namer_code(w->names, pc, code, sizeof code, NULL);
    size_t n = strcspn(fn, "+ "); /* the symbol alone */
    n = n < cap ? n : cap - 1;
    memcpy(buf, fn, n);
    buf[n] = '\0';
    return keep(slot, pc + 1, buf); /* (never 0) */
}

/* The name of data d's object ("<malloc0001@main+26>", "config",
 * "libc.so.6:.bss"), in buf or as it is kept, and in *key a number for
 * that name (export_access.object_key): a heap block's number and whether
 * it is released; where the symbolizer keeps a name that is the whole
 * object's (bit 62 set); the number given a module's section (bit 61); 0
 * for none. */
static const char *object_of(walk *w, const data_name *d, char *buf, size_t cap,
                             uint64_t *key)
{
    *key = 0;
    if (d->kind == DATA_HEAP) {
        *key = (d->block.id + 1) | (uint64_t)!!d->block.released << 63;
        return namer_block_name(w->names, &d->block, buf, cap, NULL);
    }
    if (d->object && d->kind != DATA_SECTION) { /* kept by the symbolizer */
        *key = (uintptr_t)d->object | 1ull << 62; /* while the walk lasts */
        return d->object;
    }
    section_key *k = NULL;
    if (d->object) {
        uintptr_t h = (uintptr_t)d->object ^ (uintptr_t)d->module >> 4;
        k = &w->sections[(h ^ h >> 9) % SECTION_KEYS];
        if (k->key && k->module == d->module && k->section == d->object) {
            *key = k->key;
            if (k->name[0])
                return k->name;
            k = NULL; /* (a name too long to keep) */
        }
    }
    namer_object_text(w->names, d, buf, cap);
    if (k) {
        size_t n = strlen(buf);
        *k = (section_key){ d->module, d->object, ++w->section_keys | 1ull << 61, "" };
        if (n < SECTION_KEPT)
            memcpy(k->name, buf, n + 1);
        *key = k->key;
    }
    return buf;
}

static int add_access(walk *w, const memtap_event *ev)
{
    const memtap_record *x = &ev->rec;
    char buf[NAME_CAP], function[NAME_CAP], site[NAME_CAP];
    data_name d;
    namer_data(w->names, x->addr, &d);
    int heap = d.kind == DATA_HEAP;
    uint64_t key;
    const char *object = object_of(w, &d, buf, sizeof buf, &key);
    export_access a = { ev->tid, x->seq, { (char)x->kind, 0 }, x->pc, x->addr,
                        x->size, x->kind == MEMTAP_EV_COPY, x->addr2,
                        x->count, function_of(w, x->pc, function, sizeof function),
                        object, key, d.region,
                        heap ? d.block.id + 1 : 0,
                        heap ? site_of(w, &d.block, site, sizeof site) : NULL,
                        heap ? site_key(&d.block) : 0, 0, 0, 0, NULL };
    if (w->cache) {
        cachesim_outcome out;
        if (cachesim_event(w->cache, ev, &out))
            return oom(w);
        a.modeled = 1;
        a.d1_misses = out.d1_misses;
        a.ll_misses = out.ll_misses;
        a.miss_cause = out.cause;
    }
    return w->sink->access(w->sink->arg, &a) ? 1 : 0;
}

/* Completes the row of the block in slot i, released at seq. */
static int release_slot(walk *w, uint32_t i, uint64_t seq)
{
    live_block *b = &w->blocks[i];
    b->row.freed = 1;
    b->row.free_seq = seq;
    b->row.site_name = b->site_name;
    int rc = w->sink->block(w->sink->arg, &b->row) ? 1 : 0;
    free(b->site_name);
    b->site_name = NULL;
    b->used = 0;
    w->free_slots[w->nfree++] = i;
    return rc;
}

static int release(walk *w, uint64_t addr, uint64_t seq)
{
    int64_t i = index_get(&w->by_address, addr);
    if (i < 0 || (size_t)i >= w->nblocks || !w->blocks[i].used ||
        w->blocks[i].row.address != addr)
        return 0;
    index_put(&w->by_address, addr, UINT32_MAX); /* gone */
    return release_slot(w, (uint32_t)i, seq);
}

/* munmap: every live mapping inside [addr, end). */
static int release_range(walk *w, uint64_t addr, uint64_t end, uint64_t seq)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < w->nblocks; i++) {
        live_block *b = &w->blocks[i];
        if (b->used && b->row.address >= addr && b->row.address < end &&
            (b->row.kind[0] == MEMTAP_EV_MMAP ||
             b->row.kind[0] == MEMTAP_EV_MREMAP)) {
            if (index_get(&w->by_address, b->row.address) == (int64_t)i)
                index_put(&w->by_address, b->row.address, UINT32_MAX);
            rc = release_slot(w, (uint32_t)i, seq);
        }
    }
    return rc;
}

static int add_block(walk *w, const memtap_event *ev)
{
    const memtap_record *x = &ev->rec;
    char code[NAME_CAP];
    uint64_t named = symbolizer_alloc_site(w->sym, x);
    const char *site = namer_code(w->names, named, code, sizeof code, NULL);
    uint32_t i;
    int made;
    if (w->nfree) {
        i = w->free_slots[--w->nfree];
    } else {
        if (!array_push((void **)&w->blocks, &w->nblocks, &w->blocks_cap,
                        sizeof *w->blocks))
            return oom(w);
        uint32_t *slots = realloc(w->free_slots,
                                  w->blocks_cap * sizeof *slots);
        if (!slots)
            return oom(w);
        w->free_slots = slots;
        i = (uint32_t)w->nblocks - 1;
    }
    live_block *b = &w->blocks[i];
    memset(b, 0, sizeof *b);
    b->row = (export_block){ .number = x->aux, .kind = { (char)x->kind, 0 },
                             .address = x->addr, .size = x->size,
                             .site = named, .tid = ev->tid,
                             .alloc_seq = x->seq,
                             .stack = symbolizer_stack_key(w->sym,
                                                           memtap_heap_stack(x)) };
    if (b->row.stack && index_value(&w->stacks, b->row.stack, &made) == NULL)
        return oom(w);
    b->site_name = strdup(site);
    b->used = 1;
    if (!b->site_name || index_put(&w->by_address, x->addr, i))
        return oom(w);
    return 0;
}

static int heap_event(walk *w, const memtap_event *ev)
{
    const memtap_record *x = &ev->rec;
    int rc = 0;
    if ((x->kind == MEMTAP_EV_REALLOC || x->kind == MEMTAP_EV_MREMAP) &&
        x->addr2)
        rc = release(w, x->addr2, x->seq);
    else if (x->kind == MEMTAP_EV_FREE)
        rc = release(w, x->addr, x->seq);
    else if (x->kind == MEMTAP_EV_MUNMAP)
        rc = release_range(w, x->addr, x->addr + x->size, x->seq);
    if (rc || x->kind == MEMTAP_EV_FREE || x->kind == MEMTAP_EV_MUNMAP ||
        (x->flags & MEMTAP_RF_FAILED) || !x->addr)
        return rc;
    return add_block(w, ev);
}

static int add_event(walk *w, const memtap_event *ev)
{
    if (count_thread(w, ev->tid, ev->rec.seq))
        return -1;
    if (render_is_access_kind(ev->rec.kind))
        return add_access(w, ev);
    /* a block's row names the heap as it was before the event */
    int rc = heap_map_kind(ev->rec.kind) ? heap_event(w, ev) : 0;
    namer_learn(w->names, &ev->rec, NULL);
    return rc;
}

/* Records left out: the heap's blocks, which name the accesses kept. */
static int rows_learn(void *self, const memtap_record *recs, size_t n,
                      uint32_t tid)
{
    walk *w = self;
    (void)tid;
    namer_learn_all(w->names, recs, n);
    return 0;
}

static int add_modules(walk *w, const memtap_trace *t)
{
    for (size_t i = 0; i < memtap_trace_module_count(t); i++) {
        const memtap_module *m = memtap_trace_module_at(t, i);
        char id[2 * 32 + 1] = "";
        for (size_t k = 0; k < m->build_id_len && k < 32; k++)
            snprintf(id + 2 * k, 3, "%02x", m->build_id[k]);
        if (w->sink->module(w->sink->arg, m, id))
            return 1;
    }
    return 0;
}

/* The frames of one stack, one row each. */
typedef struct frame_walk {
    walk *w;
    export_frame row;
} frame_walk;

static int put_frame(void *arg, uint64_t pc, const char *text)
{
    frame_walk *f = arg;
    f->row.pc = pc;
    f->row.frame = text;
    int rc = f->w->sink->frame(f->w->sink->arg, &f->row);
    f->row.depth++;
    return rc;
}

/* The blocks still live, the threads and the stacks blocks name, at the
 * end. */
static int finish(walk *w)
{
    for (size_t i = 0; i < w->nblocks; i++) {
        live_block *b = &w->blocks[i];
        if (!b->used)
            continue;
        b->row.site_name = b->site_name;
        if (w->sink->block(w->sink->arg, &b->row))
            return 1;
    }
    for (size_t i = 0; i < w->nthreads; i++)
        if (w->sink->thread(w->sink->arg, &w->threads[i]))
            return 1;
    for (size_t i = 0; i < w->stacks.cap; i++) {
        frame_walk f = { w, { w->stacks.v[i].key, 0, 0, NULL } };
        if (w->stacks.v[i].used &&
            symbolizer_stack_frames(w->sym, f.row.stack, put_frame, &f))
            return 1;
    }
    return 0;
}

static void walk_free(walk *w)
{
    for (size_t i = 0; i < w->nblocks; i++)
        free(w->blocks[i].site_name);
    free(w->blocks);
    free(w->free_slots);
    free(w->threads);
    index_free(&w->by_address);
    index_free(&w->by_tid);
    index_free(&w->stacks);
    namer_destroy(w->names);
    free(w->sites);
    free(w->functions);
    cachesim_destroy(w->cache);
}

/* The walk as a tool of the offline interface (trace/tool.h). */
static int rows_event(void *self, const memtap_event *ev)
{
    walk *w = self;
    w->failed = add_event(w, ev); /* its message is in w->err */
    if (w->progress)
        w->progress(w->parg);
    return w->failed != 0;
}

int export_rows(memtap_trace *t, symbolizer *sym, const cache_geometry *cache,
                const export_sink *sink,
                void (*progress)(void *), void *parg, char *err,
                size_t errcap)
{
    walk w;
    memset(&w, 0, sizeof w);
    w.sink = sink;
    w.err = err;
    w.errcap = errcap;
    w.sym = sym;
    w.names = namer_create(sym, 0);
    w.sites = calloc(SITE_CACHE, sizeof *w.sites);
    w.functions = calloc(FUNCTION_CACHE, sizeof *w.functions);
    w.progress = progress;
    w.parg = parg;
    if (cache)
        w.cache = cachesim_create(&cache[0], &cache[1]);
    int rc = w.names && w.sites && w.functions && (w.cache || !cache) ? add_modules(&w, t) : oom(&w);
    if (rc == 0) {
        trace_tool tool = { .self = &w, .event = rows_event, .learn = rows_learn };
        rc = trace_tools_walk(t, &tool, 1, NULL, NULL);
        if (w.failed) {
            rc = w.failed;
        } else if (rc < 0) { /* the walk's status */
            snprintf(err, errcap, "%s", memtap_status_string(rc));
            rc = -1;
        }
    }
    if (rc == 0)
        rc = finish(&w);
    walk_free(&w);
    return rc;
}
