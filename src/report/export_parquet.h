/*
 * export_parquet.h - a trace as Parquet files for dataframe and cluster
 * engines (DuckDB, Polars, Spark), written by memtap's own Parquet writer
 * (parquet.h):
 *
 *   DIR/accesses/pid=P/tid=T/data_N.parquet   one partition per thread
 *   DIR/blocks/pid=P/data_N.parquet           heap blocks and mappings
 *   DIR/modules/pid=P/data_N.parquet
 *   DIR/threads/pid=P/data_N.parquet
 *   DIR/stacks/pid=P/data_N.parquet           the blocks' call stacks
 *
 * The columns are those of the SQLite export (export_sqlite.h) with names
 * as strings, a pid column and a run column (the number `memtap run` gave
 * the run, the same in each of its processes' traces: exports of several
 * runs read together tell them apart); the traces of one run's processes
 * (a parent and its forked children) export into one DIR side by side.
 */
#ifndef MEMTAP_REPORT_EXPORT_PARQUET_H
#define MEMTAP_REPORT_EXPORT_PARQUET_H

#include <stddef.h>
#include <stdint.h>

#include "memtap/trace.h"
#include "report/cache_model.h"
#include "symbols/symbolizer.h"

/* Writes the trace's events, walked from the start, into dir (with the
 * cache model's columns when cache, D1 and LL, is not NULL) (created if
 * needed; refused when it holds this process's files already); split: a
 * partition's files of about that many bytes each (0: one file).
 * progress, when not NULL, is called once per event.  Returns 0, or -1
 * with the reason in err. */
int export_parquet(memtap_trace *t, symbolizer *sym, const cache_geometry *cache,
                   const char *dir, uint64_t split,
                   void (*progress)(void *),
                   void *arg, char *err, size_t errcap);

#endif
