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

/* One level: sets of `assoc` lines, most recently used first, each with
 * the owner of its unwritten data (a write-back cache: a dirty line's
 * data goes down when it leaves) and a number the caller keeps with the
 * line while the level holds it (its reuse clock node, say). */
typedef struct cache_way {
    uint32_t dirty;      /* the owner of the data written into it; 0: clean */
    uint32_t kept;       /* the caller's number; 0 when the line came in */
} cache_way;
typedef struct cache_level {
    uint64_t sets;
    uint64_t set_mask;   /* sets - 1 when sets is a power of two, else 0 */
    uint32_t assoc;
    uint64_t *tags;      /* line number + 1; 0: empty */
    cache_way *ways;     /* beside each tag */
} cache_level;
/* 0, or -1 when out of memory. */
int cache_level_init(cache_level *l, const cache_geometry *g);
void cache_level_free(cache_level *l);
/* A line a miss replaced, and the owner of its data when it was dirty
 * (0: clean, or the way was empty). */
typedef struct cache_victim {
    uint64_t line;
    uint32_t owner;
} cache_victim;
/* The first way of line's set. */
static inline uint64_t cache_level_set(const cache_level *l, uint64_t line)
{
    return (l->set_mask ? line & l->set_mask : line % l->sets) * l->assoc;
}
/* Looks line up in its set, whose first way is at (cache_level_set); on
 * a miss it replaces the set's least recently used line (*out).  A write
 * (owner non-zero) leaves the line dirty, its data the owner's.  Returns
 * 1 on a hit.  The line is then the set's most recent: the caller's
 * number kept with it is l->ways[at].kept. */
static inline int cache_level_access(cache_level *l, uint64_t at, uint64_t line,
                                     uint32_t owner, cache_victim *out);
/* cache_level_access past the set's most recent line. */
int cache_level_access_rest(cache_level *l, uint64_t at, uint64_t line, uint32_t owner,
                            cache_victim *out);
static inline int cache_level_access(cache_level *l, uint64_t at, uint64_t line,
                                     uint32_t owner, cache_victim *out)
{
    if (l->tags[at] != line + 1)
        return cache_level_access_rest(l, at, line, owner, out);
    if (owner) /* the most recent: nothing moves */
        l->ways[at].dirty = owner;
    return 1;
}
/* The level above writes line back: when this level holds it, it becomes
 * dirty, owner's (its place in the order unchanged).  Returns 1 when it
 * was there. */
int cache_level_write_back(cache_level *l, uint64_t line, uint32_t owner);
/* Takes line out (another thread's write invalidated it; the data moves
 * to the writer, whose copy is dirty then): its way is the set's next to
 * be filled.  Returns 1 when it was there. */
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

/* Reuse distances, as far as the model needs them: in which of the
 * ranges 0, 1, 2-3, 4-7, ... (split once more at `mark`, the first
 * level's lines, when that is no power of two) the distinct lines used
 * between two uses of a line fall.  The lines are a list in the order of
 * their last use (an LRU stack) that knows the first line of each range:
 * a line used again moves to the front, and each range before its own
 * starts one line earlier: the cost is the range's number, not a
 * search. */
#define REUSE_RANGES 48
#define REUSE_PAGE_LINES 64   /* the lines whose nodes one page table entry finds */
typedef struct reuse_node {
    uint64_t line;
    uint32_t prev, next;   /* the more and the less recent (UINT32_MAX:
                              none) */
    uint32_t range;
} reuse_node;
typedef struct reuse_clock {
    uint64_t from[REUSE_RANGES]; /* each range's first stack position */
    uint32_t first[REUSE_RANGES]; /* the line there (UINT32_MAX: none) */
    unsigned nranges;
    unsigned end;          /* the range of the stack's next position */
    uint32_t head, tail;
    reuse_node *nodes;     /* one per line used */
    size_t nnodes, nodes_cap;
    index_map pages;       /* line / REUSE_PAGE_LINES -> its lines' nodes */
    uint32_t (*page_nodes)[REUSE_PAGE_LINES]; /* node + 1 per line; 0: none */
    size_t npages, pages_cap;
} reuse_clock;
/* An empty clock whose ranges are cut at mark too (it takes memory as
 * lines come). */
void reuse_clock_init(reuse_clock *c, uint64_t mark);
void reuse_clock_free(reuse_clock *c);
/* A use of line: its reuse distance (distinct lines used since its last
 * use) rounded down to its range's first, -1 for its first use, -2 when
 * out of memory.  *node is the line's node + 1 when the caller knows it
 * (kept in a cache level that holds the line: no search then), else 0,
 * and set. */
int64_t reuse_clock_use(reuse_clock *c, uint64_t line, uint32_t *node);
/* Fills f with the lines used last, as many as it holds, the most recent
 * first in its order (f was empty: one thread's cache when another
 * thread comes); 0, or -1 when out of memory. */
int reuse_clock_recent(const reuse_clock *c, cache_full *f);

#endif
