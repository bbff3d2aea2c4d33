/*
 * export_sqlite.h - a trace as an SQLite database (libsqlite3): accesses,
 * heap blocks, modules, threads and the names of objects and functions,
 * indexed for accesses per object, per instruction and per thread.
 */
#ifndef MEMTAP_REPORT_EXPORT_SQLITE_H
#define MEMTAP_REPORT_EXPORT_SQLITE_H

#include <stddef.h>

#include "memtap/trace.h"
#include "report/cache_model.h"
#include "symbols/symbolizer.h"

/* Writes the trace's events, walked from the start, into a new database
 * at path (which must not exist), with the cache model's columns when
 * cache (D1 and LL) is not NULL (export_rows.h).  progress, when not NULL, is called
 * once per event.  Returns 0, or -1 with the reason in err. */
int export_sqlite(memtap_trace *t, symbolizer *sym, const cache_geometry *cache,
                  const char *path,
                  void (*progress)(void *), void *arg, char *err,
                  size_t errcap);

#endif
