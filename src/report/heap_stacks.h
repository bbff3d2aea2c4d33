/*
 * report/heap_stacks.h - heaptrack's questions asked of each allocation
 * call stack: how many allocations and bytes, how many temporary (freed
 * before the next allocation), how many bytes it held when the whole heap
 * peaked, how many it never freed, and its allocations' sizes.  Fed by
 * the report's walk, block by block; malloc-family blocks only (mappings
 * and the program break are no allocator's calls).
 */
#ifndef MEMTAP_REPORT_HEAP_STACKS_H
#define MEMTAP_REPORT_HEAP_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include "report/index.h"
#include "symbols/symbolizer.h"

/* Sizes in powers of two: bin i holds [2^i, 2^(i+1)) (bin 0: 0 and 1). */
#define HEAP_STACK_SIZES 24

typedef struct heap_stack {
    uint32_t key;        /* symbolizer_stack_key */
    uint64_t site;       /* the site its blocks are named after */
    uint64_t allocs, bytes, frees, temporary;
    uint64_t live, live_bytes; /* at the end: not freed */
    uint64_t at_peak;    /* bytes live when the heap peaked */
    uint64_t accesses;   /* to its blocks (a copy counts for each side) */
    uint64_t seen;       /* the heap's peak count when at_peak was due */
    uint64_t sizes[HEAP_STACK_SIZES];
    char **frames;       /* "function file:line" each (heap_stacks_name) */
    uint32_t nframes;
} heap_stack;

typedef struct heap_stacks {
    heap_stack *v;       /* by allocations, most first, once finished */
    size_t n, cap;
    index_map by_key;
    uint64_t peaks;      /* times the heap reached a new peak */
    uint32_t last_key;   /* heap_stacks_touch's last stack, + 1 */
    size_t last;
} heap_stacks;

/* A block of size bytes allocated from stack key (0: none known); peak
 * says the heap reached a new peak with it.  0, or -1 out of memory. */
int heap_stacks_alloc(heap_stacks *s, uint32_t key, uint64_t site,
                      uint64_t size, int peak);
/* A block of stack key released; temporary: before the next allocation. */
void heap_stacks_free(heap_stacks *s, uint32_t key, uint64_t size,
                      int temporary);
/* An access to a block of stack key. */
void heap_stacks_touch(heap_stacks *s, uint32_t key);
/* After the walk: settles what each held at the peak, sorts, and names
 * each stack's frames with sym (symbolizer_stack_frames).  0, or -1 out
 * of memory. */
int heap_stacks_finish(heap_stacks *s, symbolizer *sym);
void heap_stacks_release(heap_stacks *s);

#endif
