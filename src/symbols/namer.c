/*
 * namer.c - structured names of a trace's addresses, and their text.  Heap
 * blocks are named here (MadT Table II); everything else by the
 * symbolizer.  Code names, block names and the names of static data are
 * kept in small direct-mapped caches: most accesses of a trace repeat a
 * few instructions, blocks and addresses.
 */
#include "namer.h"
#include "sys/hash.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CODE_CACHE 4096u         /* instruction names kept, by pc */
#define NAME_KEPT 120u           /* longer names are not kept */
#define BLOCK_CACHE 1024u        /* heap block names kept, by number */
#define STATIC_CACHE 4096u       /* static data names kept, by address */
#define SITE_MAX 512u            /* an allocation site's name */
#define SPANS 4u                 /* ranges of static data kept */

/* An instruction's name as code_name() made it. */
typedef struct code_slot {
    uint64_t pc;
    int valid;
    uint32_t len;                /* of name */
    char name[NAME_KEPT];
} code_slot;

/* A heap block's name as block_name() made it. */
typedef struct block_slot {
    heap_block block;            /* the block it names, as it was */
    int valid;
    uint32_t len;                /* of name */
    char name[NAME_KEPT];
} block_slot;

/* The name of an address outside the heap as namer_name_static made it
 * (the symbolizer's answer for an address never changes). */
typedef struct static_slot {
    uint64_t addr;
    int valid;
    uint32_t len;                /* of name */
    const char *region;
    char name[NAME_KEPT];
} static_slot;

/* An answer of the symbolizer's that holds for a range of addresses (an
 * array's elements, a stripped file's section), with its text up to the
 * offset: a loop over several arrays finds each of them here. */
typedef struct span {
    data_name d;                 /* d.same_hi == 0: empty */
    char prefix[NAME_KEPT];
    uint32_t prefix_len;
    unsigned prefix_base;        /* the offset's base; 0: no prefix */
    uint64_t from;               /* where the offset counts from */
    int shift;                   /* namer_span's */
    uint32_t region_len;         /* strlen(d.region) */
} span;

struct namer {
    symbolizer *sym;
    int lines;
    heap_map *heap;
    code_slot *codes;            /* CODE_CACHE slots, direct-mapped */
    block_slot *blocks;          /* BLOCK_CACHE slots, direct-mapped */
    static_slot *statics;        /* STATIC_CACHE slots, direct-mapped */
    span spans[SPANS];           /* the last answers with a range */
    unsigned next_span;          /* the one to replace next */
    unsigned hit;                /* the one that answered last */
};

namer *namer_create(symbolizer *sym, int lines)
{
    namer *n = calloc(1, sizeof *n);
    if (!n)
        return NULL;
    n->heap = heap_map_create();
    n->codes = calloc(CODE_CACHE, sizeof *n->codes);
    n->blocks = calloc(BLOCK_CACHE, sizeof *n->blocks);
    n->statics = calloc(STATIC_CACHE, sizeof *n->statics);
    if (!n->heap || !n->codes || !n->blocks || !n->statics) {
        namer_destroy(n);
        return NULL;
    }
    n->sym = sym;
    n->lines = lines;
    symbolizer_name_sites(sym, n->heap);
    return n;
}

void namer_destroy(namer *n)
{
    if (!n)
        return;
    heap_map_destroy(n->heap);
    free(n->codes);
    free(n->blocks);
    free(n->statics);
    free(n);
}

int namer_refresh(namer *n)
{
    int rc = n->sym ? symbolizer_refresh(n->sym) : 0;
    if (rc > 0) {
        memset(n->codes, 0, CODE_CACHE * sizeof *n->codes);
        memset(n->blocks, 0, BLOCK_CACHE * sizeof *n->blocks);
        memset(n->statics, 0, STATIC_CACHE * sizeof *n->statics);
        memset(n->spans, 0, sizeof n->spans);
    }
    return rc;
}

int namer_learn(namer *n, const memtap_record *x, heap_block *old)
{
    return heap_map_kind(x->kind) ? heap_map_apply(n->heap, x, old) : 0;
}

size_t namer_learn_all(namer *n, const memtap_record *recs, size_t count)
{
    size_t heap = 0;
    for (size_t i = 0; i < count; i++)
        if (heap_map_kind(recs[i].kind)) {
            heap_map_apply(n->heap, &recs[i], NULL);
            heap++;
        }
    return heap;
}

const heap_block *namer_block_at(const namer *n, uint64_t addr)
{
    return heap_map_find(n->heap, addr);
}

void namer_heap_gap(const namer *n, uint64_t addr, uint64_t *lo, uint64_t *hi)
{
    heap_map_gap(n->heap, addr, lo, hi);
}

const char *namer_block_region(const heap_block *b)
{
    int mapping = (b->kind == MEMTAP_EV_MMAP && !(b->flags & MEMTAP_RF_BRK)) ||
                  b->kind == MEMTAP_EV_MREMAP;
    return mapping ? "[mmap]" : "[heap]";
}

static int in_span(const span *s, uint64_t addr)
{
    return addr - s->d.same_lo < s->d.same_hi - s->d.same_lo;
}

/* The kept range addr is in, or NULL: the one that answered last first. */
static const span *span_of(namer *n, uint64_t addr)
{
    if (in_span(&n->spans[n->hit], addr))
        return &n->spans[n->hit];
    for (unsigned i = 0; i < SPANS; i++)
        if (in_span(&n->spans[i], addr)) {
            n->hit = i;
            return &n->spans[i];
        }
    return NULL;
}

/* namer_data outside the heap blocks: the symbolizer's answer, or a kept
 * one again while addr is in its range. */
static void static_data(namer *n, uint64_t addr, data_name *out)
{
    const span *kept = span_of(n, addr);
    if (kept) {
        *out = kept->d;
        out->addr = addr;
    } else if (n->sym) {
        symbolizer_data(n->sym, addr, out);
        if (out->same_hi > out->same_lo) {
            span *s = &n->spans[n->hit = n->next_span++ % SPANS];
            s->d = *out;
            s->from = out->start;
            s->shift = -1;
            s->prefix_base = symbolizer_data_prefix(out, s->prefix, sizeof s->prefix);
            var_span v;
            if (!s->prefix_base &&
                symbolizer_data_span(n->sym, out, s->prefix, sizeof s->prefix,
                                     &v) == 0) {
                s->d.same_lo = v.lo; /* (named alike: the row, the scalar) */
                s->d.same_hi = v.hi;
                s->from = v.from;
                s->shift = v.kind == VAR_SPAN_ROW ? (int)v.shift : NAMER_SPAN_SCALAR;
                s->prefix_base = v.kind == VAR_SPAN_OTHER ? 0 : 10;
            }
            s->prefix_len = (uint32_t)strlen(s->prefix);
            if (s->prefix_len + 1 >= sizeof s->prefix)
                s->prefix_base = 0; /* cut: not kept */
            s->region_len = (uint32_t)strlen(s->d.region);
        }
    } else {
        memset(out, 0, sizeof *out);
        out->kind = DATA_UNKNOWN;
        out->addr = addr;
        out->region = "[unknown]";
    }
}

void namer_data(namer *n, uint64_t addr, data_name *out)
{
    const heap_block *b = heap_map_find(n->heap, addr);
    if (b) {
        out->kind = DATA_HEAP;
        out->addr = addr;
        out->start = b->start;
        out->end = 0;
        out->object = out->module = NULL;
        out->region = namer_block_region(b);
        out->block = *b;
    } else {
        static_data(n, addr, out);
    }
}

const char *namer_region(namer *n, uint64_t addr, uint64_t *lo, uint64_t *hi)
{
    const heap_block *b = heap_map_find(n->heap, addr);
    if (b) {
        *lo = b->start;
        *hi = b->start + (b->size ? b->size : 1);
        return namer_block_region(b);
    }
    *lo = *hi = 0;
    return n->sym ? symbolizer_region(n->sym, addr, lo, hi) : "[unknown]";
}

/* MadT Table II: <mallocN@site>, <freed:N@site>, <memmapN@site>, ... */
static void block_name(namer *n, const heap_block *b, char *buf, size_t cap)
{
    int mapping = b->kind == MEMTAP_EV_MMAP || b->kind == MEMTAP_EV_MREMAP;
    const char *prefix;
    if (b->released)
        prefix = mapping ? "unmap:" : "freed:";
    else
        switch (b->kind) {
        case MEMTAP_EV_CALLOC: prefix = "calloc"; break;
        case MEMTAP_EV_REALLOC: prefix = "realloc"; break;
        case MEMTAP_EV_MMAP: prefix = "memmap"; break;
        case MEMTAP_EV_MREMAP: prefix = "mremap"; break;
        default: prefix = "malloc"; break;
        }
    char site[SITE_MAX];
    if (n->sym)
        symbolizer_code(n->sym, b->site, site, sizeof site);
    else
        snprintf(site, sizeof site, "0x%" PRIx64, b->site);
    snprintf(buf, cap, "<%s%04" PRIu64 "@%s>", prefix, b->id, site);
}

/* Whether two blocks get the same name (block_name). */
static int same_name(const heap_block *a, const heap_block *b)
{
    return a->id == b->id && a->site == b->site && a->kind == b->kind &&
           a->released == b->released;
}

const char *namer_block_name(namer *n, const heap_block *b, char *buf,
                             size_t cap, size_t *len_out)
{
    block_slot *slot = &n->blocks[b->id % BLOCK_CACHE];
    size_t len;
    if (!len_out)
        len_out = &len;
    if (slot->valid && same_name(&slot->block, b)) {
        *len_out = slot->len;
        return slot->name;
    }
    block_name(n, b, buf, cap);
    len = *len_out = strlen(buf);
    if (len < NAME_KEPT) {
        memcpy(slot->name, buf, len + 1);
        slot->len = (uint32_t)len;
        slot->block = *b;
        slot->valid = 1;
    }
    return buf;
}

/* "BLOCK+OFFSET" of addr in blk, by hand: the most common name of all. */
static void heap_text(namer *n, const heap_block *blk, uint64_t addr,
                      char *buf, size_t cap)
{
    char name[SITE_MAX + 32], digits[24];
    size_t len;
    const char *b = namer_block_name(n, blk, name, sizeof name, &len);
    uint64_t off = addr - blk->start;
    size_t k = sizeof digits;
    digits[--k] = '\0';
    do
        digits[--k] = (char)('0' + off % 10);
    while (off /= 10);
    size_t dlen = sizeof digits - 1 - k;
    if (len + 1 + dlen < cap) {
        memcpy(buf, b, len);
        buf[len] = '+';
        memcpy(buf + len + 1, digits + k, dlen + 1);
    } else {
        snprintf(buf, cap, "%s+%s", b, digits + k);
    }
}

void namer_data_text(namer *n, const data_name *d, char *buf, size_t cap)
{
    if (d->kind == DATA_HEAP)
        heap_text(n, &d->block, d->addr, buf, cap);
    else if (n->sym)
        symbolizer_data_text(n->sym, d, buf, cap);
    else
        snprintf(buf, cap, "0x%" PRIx64, d->addr);
}

void namer_object_text(namer *n, const data_name *d, char *buf, size_t cap)
{
    if (d->kind != DATA_HEAP) {
        symbolizer_object_text(d, buf, cap);
        return;
    }
    size_t len;
    const char *b = namer_block_name(n, &d->block, buf, cap, &len);
    if (b != buf && cap) {
        len = len < cap ? len : cap - 1;
        memcpy(buf, b, len);
        buf[len] = '\0';
    }
}

const char *namer_heap_name(namer *n, uint64_t addr, uint64_t *off,
                            const char **region, char *buf, size_t cap,
                            size_t *len)
{
    const heap_block *b = heap_map_find(n->heap, addr);
    if (!b)
        return NULL;
    *off = addr - b->start;
    *region = namer_block_region(b);
    return namer_block_name(n, b, buf, cap, len);
}

const char *namer_name_data(namer *n, uint64_t addr, char *buf, size_t cap)
{
    const heap_block *b = heap_map_find(n->heap, addr);
    if (b) { /* the block as it is in the map: no copy */
        heap_text(n, b, addr, buf, cap);
        return namer_block_region(b);
    }
    size_t len;
    const char *region, *name = namer_name_static(n, addr, buf, cap, &len, &region);
    if (name != buf)
        memcpy(buf, name, len + 1);
    return region;
}

const char *namer_name_static_or_span(namer *n, uint64_t addr, namer_span *s,
                                      char *buf, size_t cap, size_t *len,
                                      const char **region)
{
    const span *kept = span_of(n, addr);
    namer_span mine;
    if (!s)
        s = &mine;
    if (kept && kept->prefix_base) {
        *s = (namer_span){ kept->prefix, kept->prefix_len, kept->prefix_base,
                           kept->shift, kept->from, kept->d.region,
                           kept->region_len };
        if (s != &mine)
            return NULL;
        if (kept->prefix_len + NAMER_SPAN_DIGITS < cap) {
            *len = (size_t)(namer_span_text(s, addr, buf) - buf);
            buf[*len] = '\0';
            *region = kept->d.region;
            return buf;
        }
    }
    static_slot *slot = &n->statics[fib_hash(addr, 12)];
    if (slot->valid && slot->addr == addr && slot->len < cap) {
        *len = slot->len;
        *region = slot->region;
        return slot->name;
    }
    data_name d;
    static_data(n, addr, &d);
    namer_data_text(n, &d, buf, cap);
    *len = strlen(buf);
    *region = d.region;
    if (*len < NAME_KEPT && *len + 1 < cap) { /* (not cut to cap) */
        *slot = (static_slot){ addr, 1, (uint32_t)*len, d.region, { 0 } };
        memcpy(slot->name, buf, *len + 1);
    }
    return buf;
}
const char *namer_name_static(namer *n, uint64_t addr, char *buf, size_t cap,
                              size_t *len, const char **region)
{
    return namer_name_static_or_span(n, addr, NULL, buf, cap, len, region);
}
_Static_assert(STATIC_CACHE == 1u << 12, "namer_name_static takes 12 bits");

static void code_name(namer *n, uint64_t pc, char *buf, size_t cap)
{
    symbolizer_code(n->sym, pc, buf, cap);
    if (n->lines) {
        size_t len = strlen(buf);
        if (len + 2 < cap) {
            buf[len] = ' ';
            if (!symbolizer_line(n->sym, pc, buf + len + 1, cap - len - 1))
                buf[len] = '\0';
        }
    }
}

const char *namer_code(namer *n, uint64_t pc, char *buf, size_t cap,
                       size_t *len_out)
{
    size_t len;
    if (!len_out)
        len_out = &len;
    if (!n->sym) {
        snprintf(buf, cap, "0x%" PRIx64, pc);
        *len_out = strlen(buf);
        return buf;
    }
    code_slot *slot = &n->codes[fib_hash(pc, 12)];
    if (slot->valid && slot->pc == pc) {
        *len_out = slot->len;
        return slot->name;
    }
    code_name(n, pc, buf, cap);
    len = *len_out = strlen(buf);
    if (len < NAME_KEPT) {
        memcpy(slot->name, buf, len + 1);
        slot->len = (uint32_t)len;
        slot->pc = pc;
        slot->valid = 1;
    }
    return buf;
}
_Static_assert(CODE_CACHE == 1u << 12, "namer_code takes 12 bits");
