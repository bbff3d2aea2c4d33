/*
 * watch.h - `memtap run --watch`: only the named objects are traced
 * (variables and address ranges, MEMTAP_WATCH; the heap blocks and
 * mappings made at named allocation sites, MEMTAP_WATCH_SITES).  Under
 * the fault engine only their pages are protected, so the cost follows
 * their accesses; under either engine an access that meets none of them
 * is not recorded.
 */
#ifndef MEMTAP_PRELOAD_WATCH_H
#define MEMTAP_PRELOAD_WATCH_H

#include <stdint.h>

#include "preload/core/fmt.h"
#include "memtap/trace.h"

/* Reads the lists before the program runs; when given, registers the
 * recorder's filter (filters.h) that keeps only what meets them. */
void watch_init(void);

/* Whether --watch was given (then everything else is left out). */
int watch_active(void);

/* A module was loaded: its watched variables become active (and traced,
 * when the fault engine runs).  segs gives their memory's rights. */
void watch_module_loaded(const char *path, uint64_t bias,
                         const memtap_segment *segs, uint16_t nsegs);

/* The fault engine starts: trace the watched memory known so far. */
void watch_track_all(void);

/* A block or mapping [p, p+size) was made at site: watched (returns 1,
 * and traces it) when the site is; old, when not NULL, was released. */
int watch_block_made(uint64_t p, uint64_t size, uint64_t site, uint64_t old);
void watch_block_released(uint64_t p);


/* "watch_blocks_missed=N" for the closing note (blocks of watched sites
 * beyond the table). */
void watch_end_stats(fmt_buf *b);

#endif
