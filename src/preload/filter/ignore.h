/*
 * ignore.h - the address ranges `memtap run --ignore` names
 * (MEMTAP_IGNORE): an access, or a block operation, that lies wholly
 * inside them is not recorded, whichever engine saw it.
 */
#ifndef MEMTAP_PRELOAD_IGNORE_H
#define MEMTAP_PRELOAD_IGNORE_H

#include <stdint.h>

#include "preload/core/fmt.h"

/* Reads MEMTAP_IGNORE before the program runs: comma-separated
 * "0xLO-0xHI" (addresses) or "PATH@0xLO-0xHI" (link-time addresses of
 * the module loaded from PATH, as the trace names it).  When ranges are
 * given, a filter of the recorder's stage (filters.h) drops an event of
 * this kind (memtap_kind): an access whose bytes lie inside one range, a
 * copy both of whose sides do; counted. */
void ignore_init(void);

/* A module was loaded from path with this bias: its ranges become
 * active. */
void ignore_module_loaded(const char *path, uint64_t bias);

/* "ignored=N" for the closing note, when ranges were given. */
void ignore_end_stats(fmt_buf *b);

#endif
