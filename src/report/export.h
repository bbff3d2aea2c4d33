/*
 * export.h - trace events as the input of other tools: Valgrind Lackey's
 * data lines (with M for a read-modify-write) and Dinero IV's extended din
 * format, block operations split into cache-line pieces.  Streaming: one
 * record of lookahead, whatever the trace's size.
 */
#ifndef MEMTAP_REPORT_EXPORT_H
#define MEMTAP_REPORT_EXPORT_H

#include <stdint.h>
#include <stdio.h>

#include "memtap/trace.h"
#include "trace/tool.h"

typedef enum export_format {
    EXPORT_LACKEY = 0,
    EXPORT_DINERO = 1,
} export_format;

typedef struct export_options {
    export_format format;
    uint32_t line;           /* cache line: pieces never cross one (a
                                power of two, 4 to 4096) */
    int whole_blocks;        /* lackey: a block operation as one line */
} export_options;

typedef struct exporter exporter;

/* NULL when out of memory. */
exporter *exporter_create(const export_options *opt, FILE *out);
/* Takes the events in trace order. */
void exporter_event(exporter *x, const memtap_event *ev);
/* n events of thread tid in a row (memtap_trace_next_run's). */
void exporter_run(exporter *x, const memtap_record *recs, size_t n,
                  uint32_t tid);
/* Writes what is held back and frees the exporter. */
void exporter_finish(exporter *x);
/* x as a tool of the offline interface: its finish is exporter_finish. */
trace_tool exporter_tool(exporter *x);

#endif
