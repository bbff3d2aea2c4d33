/*
 * report/cachesim_fields.h - the cache model's counts per field, named:
 * the model (cachesim.c) counts the accesses of each static address and
 * of each offset of a small heap block's site; here they get the names
 * the program's source gives them, array indices and offsets left out
 * ("recs[].key", "malloc@make_node+23 next"), and those of one name are
 * added up.
 */
#ifndef MEMTAP_REPORT_CACHESIM_FIELDS_H
#define MEMTAP_REPORT_CACHESIM_FIELDS_H

#include <stddef.h>
#include <stdint.h>

#include "symbols/heapmap.h"
#include "symbols/namer.h"
#include "symbols/symbolizer.h"

#define FIELD_HEAP (1ull << 63) /* a key's: an offset in a site's blocks */
#define FIELD_OFFSET_BITS 12    /* ... below FIELD_BLOCK_MAX */
#define FIELD_BLOCK_MAX (1u << FIELD_OFFSET_BITS)

/* The accesses of one field as the model counts them. */
typedef struct field_stats {
    uint64_t key;        /* the address, or FIELD_HEAP | object <<
                            FIELD_OFFSET_BITS | offset */
    uint64_t accesses, d1, ll;
    heap_block block;    /* a block of the site (heap keys) */
} field_stats;

/* A field by name. */
typedef struct cachesim_field {
    char *name;
    uint64_t accesses, d1, ll;
} cachesim_field;

/* The n fields' names (a heap key's object by its index in
 * object_names), those of one name added up, most D1 misses first, in
 * *out (*nout of them; cachesim_fields_free).  0, or -1 when out of
 * memory. */
int cachesim_fields_name(const field_stats *f, size_t n, char *const *object_names,
                         symbolizer *sym, namer *names, cachesim_field **out,
                         size_t *nout);
void cachesim_fields_free(cachesim_field *f, size_t n);

#endif
