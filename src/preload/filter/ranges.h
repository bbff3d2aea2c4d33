/*
 * ranges.h - sets of address ranges named on the command line (--ignore,
 * --watch): absolute ranges, and ranges in a module's link-time addresses
 * that become active when that module is loaded.  Filled before the
 * program runs and as modules load; read without locks from any thread
 * (a range becomes visible with the release store of the count).
 */
#ifndef MEMTAP_PRELOAD_RANGES_H
#define MEMTAP_PRELOAD_RANGES_H

#include <stdatomic.h>
#include <stdint.h>

#define RANGES_MAX 32

typedef struct range {
    uint64_t lo, hi;
} range;

typedef struct range_set {
    range active[RANGES_MAX];
    _Atomic uint32_t nactive;
    range pending[RANGES_MAX];     /* link-time, waiting for their module */
    char module[RANGES_MAX][256];
    uint32_t npending;
    int given;                     /* the text named any */
} range_set;

/* Reads "0xLO-0xHI" or "PATH@0xLO-0xHI", comma-separated (NULL: none). */
void ranges_parse(range_set *s, const char *text);

/* A module was loaded from path with this bias: its ranges become
 * active.  Returns how many were active before (the new ones follow). */
uint32_t ranges_module_loaded(range_set *s, const char *path, uint64_t bias);

/* The active ranges: how many (acquire) and which. */
static inline uint32_t ranges_count(const range_set *s)
{
    return atomic_load_explicit(&s->nactive, memory_order_acquire);
}

/* Whether [addr, addr+size) lies inside one range, or meets any. */
int ranges_cover(const range_set *s, uint64_t addr, uint64_t size);
int ranges_meet(const range_set *s, uint64_t addr, uint64_t size);

#endif
