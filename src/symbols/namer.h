/*
 * namer.h - names any data or code address of a trace the way the user's
 * source does, while the trace's events stream through it: a heap block by
 * allocation number and site (MadT Table II: "<malloc0013@main+45>"), else
 * what the symbolizer finds.  The namer owns the heap map it keeps current
 * and caches the names it makes; names are structured values (data_name),
 * their text is made by separate functions.
 */
#ifndef MEMTAP_SYMBOLS_NAMER_H
#define MEMTAP_SYMBOLS_NAMER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "memtap/trace.h"
#include "symbols/heapmap.h"
#include "symbols/symbolizer.h"

typedef struct namer namer;

/* sym may be NULL: addresses outside the heap are then only numbers.  With
 * lines, code names end in " file:line" when DWARF knows it. */
namer *namer_create(symbolizer *sym, int lines);
void namer_destroy(namer *n);
/* The symbolizer refreshed (symbolizer_refresh): a followed trace's new
 * modules name addresses, and when they changed the names kept before
 * are forgotten (returns 1 then); 0, or a negative status. */
int namer_refresh(namer *n);

/* Applies a heap event (others are ignored); as heap_map_apply, old
 * receives the block an F, U, R or E event released (returns 1 then). */
int namer_learn(namer *n, const memtap_record *x, heap_block *old);
/* Applies the heap events of recs[0..count) (what a tool learns of records
 * a walk's selection leaves out); returns how many there were. */
size_t namer_learn_all(namer *n, const memtap_record *recs, size_t count);

/* What holds addr now: a heap block, else symbolizer_data's answer. */
void namer_data(namer *n, uint64_t addr, data_name *out);

/* "object+offset" text of a name: "<malloc0013@main+45>+8",
 * "config.limits[3].hi+2", "libc.so.6:.got.plt+24", ... */
void namer_data_text(namer *n, const data_name *d, char *buf, size_t cap);

/* The object of a name without the offset: the heap block, the variable
 * (not its field), the symbol, "module:.section", the module, the region. */
void namer_object_text(namer *n, const data_name *d, char *buf, size_t cap);

/* namer_data and namer_data_text in one step; returns the region. */
const char *namer_name_data(namer *n, uint64_t addr, char *buf, size_t cap);

/* The name of an address no heap block holds (namer_heap_name said so:
 * the heap map is not searched again), as namer_name_data makes it: in
 * buf, or the namer's kept copy (valid until the next call), which it
 * returns, with its length in *len and the region in *region. */
const char *namer_name_static(namer *n, uint64_t addr, char *buf, size_t cap,
                              size_t *len, const char **region);

/* A range of static data named alike: each address's name is prefix
 * (its length prefix_len), then
 * - shift < 0: its offset from start in base 10 or 16 ("libc.so.6:.bss+" 12);
 * - a row of scalars, shift >= 0: the index (offset >> shift), "]", and
 *   "+N" for N bytes into the element ("cells[" 12 "]" "+2");
 * - one scalar, shift NAMER_SPAN_SCALAR: "+N" for N > 0 ("cfg.hi" "+2"). */
#define NAMER_SPAN_SCALAR 64
typedef struct namer_span {
    const char *prefix;
    uint32_t prefix_len;
    unsigned base;
    int shift;
    uint64_t start;
    const char *region;
    uint32_t region_len;     /* strlen(region) */
} namer_span;

/* The most a name in a span is longer than its prefix. */
#define NAMER_SPAN_DIGITS 44

/* Appends "+N" to o for N > 0; returns the end. */
static inline char *namer_plus_at(char *o, uint64_t n)
{
    if (!n)
        return o;
    char digits[24], *end = digits + sizeof digits;
    const char *p = symbolizer_digits(end, n, 10);
    *o++ = '+';
    memcpy(o, p, (size_t)(end - p));
    return o + (end - p);
}

/* The name of addr in s at o (s->prefix_len + NAMER_SPAN_DIGITS bytes of
 * room), not terminated; returns its end. */
static inline char *namer_span_text(const namer_span *s, uint64_t addr, char *o)
{
    uint64_t off = addr - s->start;
    memcpy(o, s->prefix, s->prefix_len);
    o += s->prefix_len;
    if (s->shift == NAMER_SPAN_SCALAR)
        return namer_plus_at(o, off);
    char digits[24], *end = digits + sizeof digits;
    const char *p = symbolizer_digits(end, s->shift < 0 ? off : off >> s->shift,
                                      s->shift < 0 ? s->base : 10);
    memcpy(o, p, (size_t)(end - p));
    o += end - p;
    if (s->shift < 0)
        return o;
    *o++ = ']';
    return namer_plus_at(o, off & ((UINT64_C(1) << s->shift) - 1));
}

/* namer_name_static for a caller that writes a range's names itself:
 * when addr lies in a range of static data the namer keeps, *s says how
 * its name reads (the same text, valid until the namer's next call) and
 * NULL is returned; else what namer_name_static returns. */
const char *namer_name_static_or_span(namer *n, uint64_t addr, namer_span *s,
                                      char *buf, size_t cap, size_t *len,
                                      const char **region);

/* When addr is in a heap block: the block's name (buf or a name the namer
 * keeps, its length in *len), with *off the offset in it and *region its
 * region; else NULL.
 * namer_name_data's heap case in parts, for callers that write the
 * offset themselves. */
const char *namer_heap_name(namer *n, uint64_t addr, uint64_t *off,
                            const char **region, char *buf, size_t cap,
                            size_t *len);

/* The region holding addr alone; the answer holds in [*lo, *hi) until the
 * next heap event: the heap block holding addr, or the module's segment
 * (empty elsewhere). */
const char *namer_region(namer *n, uint64_t addr, uint64_t *lo,
                         uint64_t *hi);

/* The live or released heap block holding addr, or NULL. */
const heap_block *namer_block_at(const namer *n, uint64_t addr);
/* A block's region: "[heap]", or "[mmap]" for a mapping. */
const char *namer_block_region(const heap_block *b);
/* Around addr, which no block holds: the addresses no block holds now
 * (heap_map_gap). */
void namer_heap_gap(const namer *n, uint64_t addr, uint64_t *lo, uint64_t *hi);

/* A heap block's name, "<malloc0013@main+45>"; the result is buf or a name
 * the namer keeps, its length in *len (len may be NULL: here and below). */
const char *namer_block_name(namer *n, const heap_block *b, char *buf,
                             size_t cap, size_t *len);

/* The instruction at pc as "main+56" (and its line, see namer_create); the
 * result is buf or a name the namer keeps, its length in *len. */
const char *namer_code(namer *n, uint64_t pc, char *buf, size_t cap,
                       size_t *len);

#endif
