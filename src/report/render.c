/*
 * render.c - text renderers for trace events.
 *
 * MadT lines (paper Tables I and II, Listing 2):
 *   L$12:<malloc0013@fMallocHandle+45>+8, [heap], findDisparity+73
 *   L#12:0x55d0c0a012a8, [heap], 0x55d0c09ff1b7
 *   M$7:<malloc0006@fMallocHandle+45>,528
 *   M#7:0x55d0c0a01290,528, 0x55d0c09ff1d2
 *   R$9:<realloc0008@grow+31>,4096,<freed:0003@main+30>
 *   F$10:<freed:0008@grow+31>
 *   Y$11:<malloc0001@main+20>+0,table+0,64, main+90
 * Internal events print as comment lines starting with '#'.
 *
 * One file: the access lines' loops (most of `show`) inline what each
 * line is made of, the sequence number's digits and the regions, heap
 * blocks and line ends kept from line to line, which no other file uses.
 */
#include "render.h"
#include "trace/accesses.h"
#include "csv_rows.h"
#include "line_buf.h"
#include "sys/hash.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define NAME_MAX_LEN LINE_NAME_MAX

/* A heap block and its region's name (a string that stays). */
typedef struct raw_region {
    uint64_t lo, hi;
    const char *name;
    size_t len;
} raw_region;

/* What symbolic lines know of the heap around an address until the next
 * heap event: one block [lo, hi), its name and region, or addresses no
 * block holds (region NULL). */
#define HEAP_NAME_KEPT 160u
#define HEAP_SPANS 4u
typedef struct heap_span {
    uint64_t lo, hi;
    const char *region;
    uint32_t region_len, len;
    char name[HEAP_NAME_KEPT];
} heap_span;

/* The end of a symbolic access line, ", REGION, CODE" (each name cut as
 * name_at cuts it), of one instruction at one region (most lines repeat
 * a few of them); region NULL: empty. */
#define SUFFIX_BITS 12u
#define SUFFIXES (1u << SUFFIX_BITS)
#define SUFFIX_MAX 128u
typedef struct suffix_slot {
    uint64_t pc;
    const char *region;
    uint32_t len;
    char text[SUFFIX_MAX];
} suffix_slot;

struct renderer {
    symbolizer *sym;
    namer *names;
    render_options opt;
    /* The last sequence number printed, in decimal, seq_len digits (the
     * first 16 of them in seq_x, zero bytes after): most lines print the
     * one after it, which is the same digits incremented (seq_at). */
    uint64_t seq;
    __m128i seq_x;
    size_t seq_len;
    /* Access lines are built in place here and written in large pieces;
     * every other write to out comes after what is here (stream()). */
    line_buf lines;
    /* --raw: the heap blocks addresses were last found in, the latest
     * first, and their regions (until the next heap event) */
    raw_region raw[2];
    /* symbolic lines: the heap around the addresses last named (until
     * the next heap event) */
    heap_span heap[HEAP_SPANS];
    unsigned heap_at, heap_next; /* the latest; the one to make next */
    csv_rows *csv;               /* CSV only */
    suffix_slot *suffixes;       /* symbolic lines' ends, SUFFIXES of them */
};

renderer *renderer_create(symbolizer *sym, const render_options *opt,
                          FILE *out)
{
    renderer *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->names = namer_create(sym, opt->lines);
    r->suffixes = calloc(SUFFIXES, sizeof *r->suffixes);
    if (!r->names || !r->suffixes || line_buf_init(&r->lines, out) != 0) {
        free(r->suffixes);
        namer_destroy(r->names);
        line_buf_free(&r->lines);
        free(r);
        return NULL;
    }
    if (opt->format == RENDER_CSV &&
        !(r->csv = csv_rows_create(sym, r->names,
                                   opt->addrs & RENDER_SYMBOLIC))) {
        renderer_destroy(r);
        return NULL;
    }
    r->sym = sym;
    r->opt = *opt;
    return r;
}

void renderer_flush(renderer *r)
{
    line_buf_flush(&r->lines);
}

/* out, for a write that is not an access line: after what is buffered. */
static FILE *stream(renderer *r)
{
    renderer_flush(r);
    return r->lines.out;
}

void renderer_destroy(renderer *r)
{
    if (!r)
        return;
    namer_destroy(r->names);
    line_buf_free(&r->lines);
    csv_rows_destroy(r->csv);
    free(r->suffixes);
    free(r);
}

int render_is_access_kind(uint8_t kind)
{
    return memtap_kind_is_access(kind);
}

static void print_internal(renderer *r, const memtap_record *x, uint32_t tid)
{
    FILE *o = stream(r);
    switch (x->kind) {
    case MEMTAP_EV_THREAD_START:
        fprintf(o, "# %" PRIu64 ": thread %u starts\n", x->seq, tid);
        break;
    case MEMTAP_EV_THREAD_EXIT:
        fprintf(o, "# %" PRIu64 ": thread %u exits\n", x->seq, tid);
        break;
    case MEMTAP_EV_START:
        fprintf(o, "# %" PRIu64 ": memtap_start\n", x->seq);
        break;
    case MEMTAP_EV_STOP:
        fprintf(o, "# %" PRIu64 ": memtap_stop\n", x->seq);
        break;
    case MEMTAP_EV_FORK:
        fprintf(o, "# %" PRIu64 ": fork: child %" PRIu64 "\n", x->seq,
                x->aux);
        break;
    case MEMTAP_EV_EXEC:
        fprintf(o, "# %" PRIu64 ": exec%s\n", x->seq,
                (x->flags & MEMTAP_RF_FAILED) ? " failed" : "");
        break;
    case MEMTAP_EV_MODULE_LOAD:
    case MEMTAP_EV_MODULE_UNLOAD: {
        const char *path = r->sym ? symbolizer_module_path(r->sym, x->aux)
                                  : NULL;
        fprintf(o, "# %" PRIu64 ": %s %s at 0x%" PRIx64 "\n", x->seq,
                x->kind == MEMTAP_EV_MODULE_LOAD ? "load" : "unload",
                path ? path : "?", x->addr);
        break;
    }
    case MEMTAP_EV_BLOCK_COUNT:
        fprintf(o, "# %" PRIu64 ": block 0x%" PRIx64 " (0x%" PRIx64
                " in its file) ran %" PRIu64 " times\n", x->seq, x->pc,
                x->addr, x->aux);
        break;
    default:
        fprintf(o, "# %" PRIu64 ": unknown event kind 0x%02x\n", x->seq,
                x->kind);
        break;
    }
}

/* 1 at [15], zeros around: 16 bytes from seq_one + 16 - n have their 1
 * at [n - 1]. */
static const uint8_t seq_one[32] = { [15] = 1 };

/* The digits (len of them, at most 16) of the number after the one in x:
 * the last digit that is not 9 incremented, the 9s after it made 0s.
 * 0 when all are 9s (the number grows a digit). */
static inline int seq_next(__m128i x, size_t len, __m128i *next)
{
    unsigned nines = (unsigned)_mm_movemask_epi8(
        _mm_cmpeq_epi8(x, _mm_set1_epi8('9')));
    unsigned rest = ~nines & ((1u << len) - 1);
    if (!rest)
        return 0;
    __m128i at = _mm_set1_epi8((char)(31 - __builtin_clz(rest)));
    __m128i idx = _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
                                13, 14, 15);
    __m128i end = _mm_set1_epi8((char)len);
    __m128i zeros = _mm_and_si128(_mm_cmpgt_epi8(idx, at),
                                  _mm_cmpgt_epi8(end, idx));
    x = _mm_sub_epi8(x, _mm_and_si128(zeros, _mm_set1_epi8(9)));
    *next = _mm_sub_epi8(x, _mm_cmpeq_epi8(idx, at)); /* -(-1): +1 */
    return 1;
}

/* seq in decimal at o (24 bytes of room); returns the end.  When it
 * follows the last one, its digits are the last one's incremented, in
 * one register: loaded and stored 16 bytes at a time, so no load waits on
 * byte stores before it (incrementing the digits a byte at a time in
 * memory, the next line's 16-byte load of them stalled: a tenth of show
 * --raw's samples; so did reloading dec_at's digits at each carry). */
static inline __attribute__((always_inline)) char *
seq_at(renderer *r, char *o, uint64_t seq)
{
    if (seq == r->seq + 1 && r->seq_len - 1 < 16) {
        __m128i one = _mm_loadu_si128(
            (const __m128i *)(seq_one + 16 - r->seq_len));
        __m128i x = _mm_add_epi8(r->seq_x, one);
        if (_mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_set1_epi8('9' + 1))) &&
            !seq_next(r->seq_x, r->seq_len, &x))
            goto anew;
        r->seq_x = x;
        _mm_storeu_si128((__m128i *)o, x);
        r->seq = seq;
        return o + r->seq_len;
    }
anew:;
    char digits[24] = { 0 }; /* a jump, 9s only, or more than 16 digits */
    r->seq_len = (size_t)(dec_at(digits, seq) - digits);
    memcpy(&r->seq_x, digits, 16);
    memcpy(o, digits, sizeof digits);
    r->seq = seq;
    return o + r->seq_len;
}

/* Opens an access line and writes its "L#12:" (mark '#') or "L$12:"
 * (mark '$'); returns where the rest goes. */
static inline __attribute__((always_inline)) char *
access_begin(renderer *r, const memtap_record *x, char mark)
{
    char *o = line_start(&r->lines);
    o[0] = (char)x->kind;
    o[1] = mark;
    o = seq_at(r, o + 2, x->seq);
    *o++ = ':';
    return o;
}

/* Ends the access line at o. */
static inline void access_end(renderer *r, char *o)
{
    *o++ = '\n';
    line_end(&r->lines, o);
}

/* The heap's blocks may be gone: what the lines kept of them is. */
static void forget_blocks(renderer *r)
{
    memset(r->raw, 0, sizeof r->raw);
    for (unsigned i = 0; i < HEAP_SPANS; i++)
        r->heap[i].lo = r->heap[i].hi = 0;
}

static int in_region(const raw_region *g, uint64_t addr)
{
    return addr - g->lo < g->hi - g->lo;
}

/* Makes raw[0] the region of addr: raw[1] when addr is in its block (the
 * two swap: accesses alternating between two blocks find both), else the
 * namer's. */
static __attribute__((noinline)) void find_region(renderer *r, uint64_t addr)
{
    raw_region g = r->raw[1];
    r->raw[1] = r->raw[0];
    if (!in_region(&g, addr)) {
        const char *name = namer_region(r->names, addr, &g.lo, &g.hi);
        if (name != g.name) {
            g.name = name;
            g.len = strlen(name);
        }
    }
    r->raw[0] = g;
}

/* The name of addr's region at o (at most LINE_NAME_MAX bytes of it):
 * the last one while addr is in its heap block.  Returns the end. */
static inline char *region_at(renderer *r, char *o, uint64_t addr)
{
    if (!in_region(&r->raw[0], addr))
        find_region(r, addr);
    return name_at(o, r->raw[0].name, r->raw[0].len);
}

/* The raw line of a load or store, "L#12:0x55d0c0a012a8, [heap],
 * 0x55d0c09ff1b7": at most 68 bytes and a region's name, so written with
 * no look at the room a line has (LINE_MAX_LEN). */
static inline __attribute__((always_inline)) void
raw_access(renderer *r, const memtap_record *x)
{
    _Static_assert(68 + LINE_NAME_MAX <= LINE_MAX_LEN, "a raw line fits");
    char *o = access_begin(r, x, '#');
    memcpy(o, "0x", 2);
    o = hex_at(o + 2, x->addr, 1);
    memcpy(o, ", ", 2);
    o = region_at(r, o + 2, x->addr);
    memcpy(o, ", 0x", 4);
    o = hex_at(o + 4, x->pc, 1);
    access_end(r, o);
}

static int is_load_store(uint8_t kind)
{
    return kind == MEMTAP_EV_LOAD || kind == MEMTAP_EV_STORE;
}

static void print_raw(renderer *r, const memtap_record *x)
{
    if (is_load_store(x->kind)) {
        raw_access(r, x);
        return;
    }
    FILE *o = stream(r);
    fprintf(o, "%c#%" PRIu64 ":", x->kind, x->seq);
    switch (x->kind) {
    case MEMTAP_EV_COPY:
        fprintf(o, "0x%" PRIx64 ",0x%" PRIx64 ",%" PRIu64 ", 0x%" PRIx64 "\n",
                x->addr, x->addr2, x->size, x->pc);
        break;
    case MEMTAP_EV_REALLOC:
    case MEMTAP_EV_MREMAP:
        fprintf(o, "0x%" PRIx64 ",%" PRIu64 ",0x%" PRIx64 ", 0x%" PRIx64 "\n",
                x->addr, x->size, x->addr2, x->pc);
        break;
    case MEMTAP_EV_FREE:
        fprintf(o, "0x%" PRIx64 ", 0x%" PRIx64 "\n", x->addr, x->pc);
        break;
    default: /* W G M C P U: address, length, site */
        fprintf(o, "0x%" PRIx64 ",%" PRIu64 ", 0x%" PRIx64 "\n", x->addr,
                x->size, x->pc);
        break;
    }
}

/* " file:line" of the call before return address site, with --lines. */
static void site_line(renderer *r, uint64_t site)
{
    char buf[NAME_MAX_LEN];
    if (r->opt.lines && site && symbolizer_line(r->sym, site - 1, buf,
                                                 sizeof buf))
        fprintf(stream(r), " %s", buf);
}

/* The name of the heap block an allocation made at addr ("0x..." when the
 * map has none there, "0x0" for a failed one). */
static const char *block_at(renderer *r, uint64_t addr, char *buf,
                            size_t cap)
{
    const heap_block *blk = addr ? namer_block_at(r->names, addr) : NULL;
    if (blk)
        return namer_block_name(r->names, blk, buf, cap, NULL);
    snprintf(buf, cap, "0x%" PRIx64, addr);
    return buf;
}

static int in_heap_span(const heap_span *h, uint64_t addr)
{
    return addr - h->lo < h->hi - h->lo;
}

/* The heap span of addr: one kept, else made anew in place of the one
 * made longest ago; NULL when its block's name is too long to keep. */
static __attribute__((noinline)) const heap_span *
find_heap_span(renderer *r, uint64_t addr)
{
    for (unsigned i = 0; i < HEAP_SPANS; i++)
        if (in_heap_span(&r->heap[i], addr))
            return &r->heap[r->heap_at = i];
    heap_span *h = &r->heap[r->heap_at = r->heap_next++ % HEAP_SPANS];
    const heap_block *b = namer_block_at(r->names, addr);
    if (!b) {
        namer_heap_gap(r->names, addr, &h->lo, &h->hi);
        h->region = NULL;
        return h;
    }
    char a[NAME_MAX_LEN];
    size_t len;
    const char *name = namer_block_name(r->names, b, a, sizeof a, &len);
    if (len >= sizeof h->name) {
        h->lo = h->hi = 0;
        return NULL;
    }
    memcpy(h->name, name, len);
    h->len = (uint32_t)len;
    h->lo = b->start;
    h->hi = b->start + (b->size ? b->size : 1);
    h->region = namer_block_region(b);
    h->region_len = (uint32_t)strlen(h->region);
    return h;
}

static inline const heap_span *heap_span_of(renderer *r, uint64_t addr)
{
    const heap_span *h = &r->heap[r->heap_at];
    return in_heap_span(h, addr) ? h : find_heap_span(r, addr);
}

/* ", REGION, CODE" of an access by the instruction at pc in region (of
 * region_len bytes) at o; returns the end.  Kept per instruction. */
static inline __attribute__((always_inline)) char *
suffix_at(renderer *r, char *o, uint64_t pc, const char *region, size_t region_len)
{
    suffix_slot *s = &r->suffixes[fib_hash(pc ^ (uintptr_t)region, SUFFIX_BITS)];
    if (s->pc == pc && s->region == region)
        return copy_at(o, s->text, s->len);
    char c[NAME_MAX_LEN];
    size_t clen;
    const char *code = namer_code(r->names, pc, c, sizeof c, &clen);
    char *from = o;
    memcpy(o, ", ", 2);
    o = name_at(o + 2, region, region_len);
    memcpy(o, ", ", 2);
    o = name_at(o + 2, code, clen);
    if ((size_t)(o - from) < SUFFIX_MAX) {
        *s = (suffix_slot){ pc, region, (uint32_t)(o - from), { 0 } };
        memcpy(s->text, from, s->len);
    }
    return o;
}

/* The symbolic line of a load or store, "L$12:<malloc0013@f+45>+8,
 * [heap], g+73": three names cut to LINE_NAME_MAX and at most 52 bytes
 * more, so written with no look at the room a line has (a kept range's
 * prefix and offset, for static data, written in place). */
static inline __attribute__((always_inline)) void
symbolic_access(renderer *r, const memtap_record *x)
{
    _Static_assert(3 * LINE_NAME_MAX + 52 <= LINE_MAX_LEN, "a line fits");
    _Static_assert(SUFFIX_MAX <= 2 * LINE_NAME_MAX + 4, "a kept suffix fits");
    char a[NAME_MAX_LEN];
    uint64_t off;
    size_t blen;
    const char *region;
    namer_span span;
    char *o = access_begin(r, x, '$');
    const heap_span *h = heap_span_of(r, x->addr);
    if (h && h->region) {
        o = name_at(o, h->name, h->len);
        *o++ = '+';
        o = dec_at(o, x->addr - h->lo);
        o = suffix_at(r, o, x->pc, h->region, h->region_len);
        access_end(r, o);
        return;
    }
    const char *blk = h ? NULL : namer_heap_name(r->names, x->addr, &off, &region,
                                                a, sizeof a, &blen);
    if (blk) {
        o = name_at(o, blk, blen);
        *o++ = '+';
        o = dec_at(o, off);
    } else {
        const char *name = namer_name_static_or_span(r->names, x->addr, &span, a,
                                                     sizeof a, &blen, &region);
        if (!name && span.prefix_len + NAMER_SPAN_DIGITS <= LINE_NAME_MAX) {
            o = namer_span_text(&span, x->addr, o);
            o = suffix_at(r, o, x->pc, span.region, span.region_len);
            access_end(r, o);
            return;
        }
        if (!name) /* (a prefix too long for a line: cut there) */
            name = namer_name_static(r->names, x->addr, a, sizeof a, &blen, &region);
        o = name_at(o, name, blen);
    }
    o = suffix_at(r, o, x->pc, region, strlen(region));
    access_end(r, o);
}

static void print_symbolic(renderer *r, const memtap_record *x,
                           const heap_block *old, int had_old)
{
    char a[NAME_MAX_LEN], b[NAME_MAX_LEN], c[NAME_MAX_LEN];
    if (is_load_store(x->kind)) {
        symbolic_access(r, x);
        return;
    }
    FILE *o = stream(r);
    fprintf(o, "%c$%" PRIu64 ":", x->kind, x->seq);
    switch (x->kind) {
    case MEMTAP_EV_COPY:
        namer_name_data(r->names, x->addr, a, sizeof a);
        namer_name_data(r->names, memtap_copy_source(x), b, sizeof b);
        fprintf(o, "%s,%s,%" PRIu64 ", %s\n", a, b, x->size,
                namer_code(r->names, x->pc, c, sizeof c, NULL));
        break;
    case MEMTAP_EV_BLOCK_STORE:
    case MEMTAP_EV_BLOCK_FETCH:
        namer_name_data(r->names, x->addr, a, sizeof a);
        fprintf(o, "%s,%" PRIu64 ", %s\n", a, x->size,
                namer_code(r->names, x->pc, c, sizeof c, NULL));
        break;
    case MEMTAP_EV_MALLOC:
    case MEMTAP_EV_CALLOC:
    case MEMTAP_EV_MMAP:
        fprintf(o, "%s,%" PRIu64, block_at(r, x->addr, a, sizeof a),
                x->size);
        site_line(r, x->pc);
        fputc('\n', o);
        break;
    case MEMTAP_EV_REALLOC:
    case MEMTAP_EV_MREMAP: {
        const char *was = b;
        if (had_old)
            was = namer_block_name(r->names, old, b, sizeof b, NULL);
        else if (memtap_alloc_replaced(x))
            namer_name_data(r->names, memtap_alloc_replaced(x), b, sizeof b);
        else
            snprintf(b, sizeof b, "0x0");
        fprintf(o, "%s,%" PRIu64 ",%s", block_at(r, x->addr, a, sizeof a),
                x->size, was);
        site_line(r, x->pc);
        fputc('\n', o);
        break;
    }
    default: { /* F U */
        const char *name = a;
        if (had_old)
            name = namer_block_name(r->names, old, a, sizeof a, NULL);
        else
            namer_name_data(r->names, x->addr, a, sizeof a);
        if (x->kind == MEMTAP_EV_MUNMAP)
            fprintf(o, "%s,%" PRIu64, name, x->size);
        else
            fputs(name, o);
        site_line(r, x->pc);
        fputc('\n', o);
        break;
    }
    }
}

static inline void lackey_access(renderer *r, const memtap_record *x)
{
    lackey_line(&r->lines, (char)x->kind, x->addr, x->size);
}

/* Lackey: " L addr,size" / " S addr,size"; block events as one line per
 * side with their whole length (Lackey would list each access). */
static void print_lackey(renderer *r, const memtap_record *x)
{
    switch (x->kind) {
    case MEMTAP_EV_LOAD:
    case MEMTAP_EV_STORE:
        lackey_access(r, x);
        break;
    case MEMTAP_EV_COPY:
        lackey_line(&r->lines, 'L', memtap_copy_source(x), x->size);
        lackey_line(&r->lines, 'S', x->addr, x->size);
        break;
    case MEMTAP_EV_BLOCK_STORE:
        lackey_line(&r->lines, 'S', x->addr, x->size);
        break;
    case MEMTAP_EV_BLOCK_FETCH:
        lackey_line(&r->lines, 'L', x->addr, x->size);
        break;
    default:
        break;
    }
}

void renderer_begin(renderer *r)
{
    if (r->opt.format != RENDER_CSV)
        return;
    csv_rows_header(r->csv, stream(r));
}

void renderer_learn(renderer *r, const memtap_event *ev)
{
    namer_learn(r->names, &ev->rec, NULL);
    if (heap_map_kind(ev->rec.kind))
        forget_blocks(r);
}

/* One event of thread tid. */
static void render(renderer *r, const memtap_record *x, uint32_t tid)
{
    heap_block old;
    int is_heap = heap_map_kind(x->kind), had_old = 0;
    if (is_heap) {
        had_old = namer_learn(r->names, x, &old);
        forget_blocks(r);
    }
    switch (r->opt.format) {
    case RENDER_LACKEY:
        print_lackey(r, x);
        return;
    case RENDER_CSV:
        csv_row(r->csv, &r->lines, x, tid);
        return;
    case RENDER_MADT:
        break;
    }
    if (!is_heap && !render_is_access_kind(x->kind)) {
        print_internal(r, x, tid);
        return;
    }
    if (r->opt.addrs & RENDER_RAW)
        print_raw(r, x);
    if ((r->opt.addrs & RENDER_SYMBOLIC) && r->sym)
        print_symbolic(r, x, &old, had_old);
}

void renderer_event(renderer *r, const memtap_event *ev)
{
    render(r, &ev->rec, ev->tid);
}

/* The lines of the loads and stores from x on (most of a trace, and of
 * show's time), in a loop of one form's lines: how many. */
static size_t access_lines(renderer *r, const memtap_record *x, size_t n)
{
    size_t i = 0;
#define EACH_ACCESS(line) \
    do { \
        for (; i < n && is_load_store(x[i].kind); i++) { \
            __builtin_prefetch(&x[i + 24]); \
            line(r, &x[i]); \
        } \
    } while (0)
    if (r->opt.format == RENDER_LACKEY)
        EACH_ACCESS(lackey_access);
    else if (r->opt.format == RENDER_MADT && r->opt.addrs == RENDER_RAW)
        EACH_ACCESS(raw_access);
    else if (r->opt.format == RENDER_MADT &&
             r->opt.addrs == RENDER_SYMBOLIC && r->sym)
        EACH_ACCESS(symbolic_access);
#undef EACH_ACCESS
    return i;
}

void renderer_run(renderer *r, const memtap_record *recs, size_t n,
                  uint32_t tid)
{
    for (size_t i = 0; i < n; i++) {
        if ((i += access_lines(r, &recs[i], n - i)) == n)
            break;
        render(r, &recs[i], tid);
    }
}

static int tool_run(void *r, const memtap_record *recs, size_t n, uint32_t tid)
{
    renderer_run(r, recs, n, tid);
    return 0;
}

static int tool_finish(void *r, int status)
{
    renderer_flush(r);
    return status;
}

/* Records left out: the heap's blocks they make and free (their names). */
static int tool_learn(void *self, const memtap_record *recs, size_t n,
                      uint32_t tid)
{
    renderer *r = self;
    (void)tid;
    if (namer_learn_all(r->names, recs, n))
        forget_blocks(r);
    return 0;
}

trace_tool renderer_tool(renderer *r)
{
    return (trace_tool){ .self = r, .run = tool_run, .finish = tool_finish,
                         .learn = tool_learn };
}
