/*
 * filters.h - the recorder's filter stage: what --ignore and --watch keep
 * out of the trace.  A filter registers before the program runs; every
 * event the recorder takes, and every access a rewritten module logged,
 * passes the registered filters in turn.  The recorder and the static
 * engine's runtime know the stage, not the options behind it.
 */
#ifndef MEMTAP_PRELOAD_FILTERS_H
#define MEMTAP_PRELOAD_FILTERS_H

#include <stdint.h>

/* Whether an event (kind, addr, size, addr2 as a record has them) stays:
 * 1 keeps it, 0 leaves it out.  Lock-free: called from handlers. */
typedef int (*filter_keeps_fn)(uint8_t kind, uint64_t addr, uint64_t size,
                               uint64_t addr2);

/* Adds a filter (at start, before any thread records); 0, or -1 when the
 * stage is full. */
int filters_add(filter_keeps_fn keeps);

/* Whether any filter is registered. */
int filters_on(void);

/* Whether every filter keeps the event. */
int filters_keep(uint8_t kind, uint64_t addr, uint64_t size, uint64_t addr2);

#endif
