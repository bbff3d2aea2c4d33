/*
 * heapmap.h - the dynamic memory blocks of a traced process over time, fed
 * with the trace's allocation events in order.  Live blocks and released
 * blocks (kept until their addresses are reused, so that a use after free
 * is named as such) are two ordered trees searched in logarithmic time.
 */
#ifndef MEMTAP_SYMBOLS_HEAPMAP_H
#define MEMTAP_SYMBOLS_HEAPMAP_H

#include <stdint.h>

#include "memtap/trace.h"

typedef struct heap_block {
    uint64_t start;
    uint64_t size;
    uint64_t id;      /* allocation number */
    uint64_t site;    /* the site it is named after: its call site (a
                         return address), or a frame further out of its
                         call stack (heap_map_name_sites) */
    uint32_t stack;   /* its call stack's id (memtap_heap_stack) */
    uint8_t kind;     /* M C R P E: how it was made */
    uint8_t flags;
    uint8_t released; /* freed or unmapped */
} heap_block;

typedef struct heap_map heap_map;

heap_map *heap_map_create(void);
void heap_map_destroy(heap_map *m);

/* Whether events of kind change the heap map: MadT's M C P R E F U (inline:
 * asked of every event of a trace). */
static inline int heap_map_kind(uint8_t kind)
{
    return memtap_kind_is_heap(kind);
}

/* Blocks made from now on are named after site(arg, their event) rather
 * than their call site. */
void heap_map_name_sites(heap_map *m,
                         uint64_t (*site)(void *arg, const memtap_record *r),
                         void *arg);

/* Applies an event (non-allocation kinds are ignored).  When old is not
 * NULL it receives the block an F, U, R or E event released, if any
 * (returns 1 then). */
int heap_map_apply(heap_map *m, const memtap_record *r, heap_block *old);

/* The block holding addr: a live one first, else a released one. */
const heap_block *heap_map_find(const heap_map *m, uint64_t addr);

/* The addresses around addr, which no block holds, that no block (live or
 * released) holds either: [*lo, *hi). */
void heap_map_gap(const heap_map *m, uint64_t addr, uint64_t *lo, uint64_t *hi);

/* Number of live blocks (for summaries and tests). */
uint64_t heap_map_live(const heap_map *m);

#endif
