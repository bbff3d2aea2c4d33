/*
 * report/cache_model.h - the pieces of a data cache model, each a plain
 * structure over line numbers (address >> log2 line size): a
 * set-associative LRU level, a fully associative LRU cache (what tells
 * capacity from conflict misses), and a reuse clock (how many distinct
 * lines were used between two uses of one); with the geometry they are
 * given, parsed as Cachegrind's options write it or read from sysfs.
 * memtap cachesim (cachesim.c) puts them together.
 */
#ifndef MEMTAP_REPORT_CACHE_MODEL_H
#define MEMTAP_REPORT_CACHE_MODEL_H

#include <stdint.h>

#include "report/index.h"

typedef struct cache_geometry {
    uint64_t size;       /* bytes */
    uint32_t assoc;      /* ways per set */
    uint32_t line;       /* bytes, a power of two */
} cache_geometry;

/* "SIZE,ASSOC,LINE" (Cachegrind's --D1/--LL form; SIZE may end in K or
 * M); 0, or -1 when it is not one or not a cache: size a multiple of
 * assoc * line, line a power of two from 8 to 4096. */
int cache_geometry_parse(const char *s, cache_geometry *out);

/* This machine's first-level data cache and its last level, from sysfs
 * (cpu0); 0, or -1 when sysfs does not say. */
int cache_geometry_of_machine(cache_geometry *d1, cache_geometry *ll);

/* One level: sets of `assoc` lines, each with the time of its last use. */
typedef struct cache_level {
    uint64_t sets;
    uint32_t assoc;
    uint64_t *tags;      /* line number + 1; 0: empty */
    uint64_t *used;
    uint64_t clock;
} cache_level;
/* 0, or -1 when out of memory. */
int cache_level_init(cache_level *l, const cache_geometry *g);
void cache_level_free(cache_level *l);
/* Looks line up; on a miss it replaces the set's least recently used
 * line.  Returns 1 on a hit. */
int cache_level_access(cache_level *l, uint64_t line);
/* Takes line out (another thread's write invalidated it): its way is the
 * set's next to be filled.  Returns 1 when it was there. */
int cache_level_drop(cache_level *l, uint64_t line);

/* A fully associative LRU cache (what tells capacity misses from
 * conflict misses): lines in a list by last use, found by an
 * open-addressing table (linear probing, deletion by backward shift). */
typedef struct cache_full {
    uint32_t cap, n, head, tail;   /* head: most recent; UINT32_MAX: none */
    uint64_t *line;                /* per slot */
    uint32_t *prev, *next;
    uint32_t *table;               /* slot + 1, 0: empty */
    uint64_t mask;                 /* table size - 1 */
} cache_full;
/* A cache of `lines` lines; 0, or -1 when out of memory. */
int cache_full_init(cache_full *f, uint32_t lines);
void cache_full_free(cache_full *f);
/* An access of line: 1 on a hit; on a miss the least recently used line
 * makes room. */
int cache_full_access(cache_full *f, uint64_t line);
/* Takes line out, its slot the next to be filled; 1 when it was there. */
int cache_full_drop(cache_full *f, uint64_t line);

/* Reuse distances: each line's last use is a mark at its time slot in a
 * Fenwick tree, so the distinct lines used between two uses of a line are
 * the marks between its two slots.  When the slots run out, the live
 * marks are numbered again in order (and the tree grows when they fill
 * an eighth of it). */
typedef struct reuse_clock {
    uint32_t *tree;      /* 1..cap */
    uint32_t cap, now;
    index_map last;      /* line -> the slot of its last use */
} reuse_clock;
/* 0, or -1 when out of memory. */
int reuse_clock_init(reuse_clock *c);
void reuse_clock_free(reuse_clock *c);
/* A use of line: its reuse distance (distinct lines used since its last
 * use), -1 for its first use, -2 when out of memory. */
int64_t reuse_clock_use(reuse_clock *c, uint64_t line);

#endif
