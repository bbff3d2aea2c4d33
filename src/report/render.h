/*
 * render.h - prints trace events as text: MadT lines (raw "#", symbolic
 * "$", or both), Valgrind Lackey's line format, or CSV.  Names come from
 * the namer the renderer owns and keeps current while events stream
 * through it.
 */
#ifndef MEMTAP_REPORT_RENDER_H
#define MEMTAP_REPORT_RENDER_H

#include <stdio.h>

#include "memtap/trace.h"
#include "trace/tool.h"
#include "symbols/namer.h"

typedef enum render_format {
    RENDER_MADT,
    RENDER_LACKEY,
    RENDER_CSV,
} render_format;

enum render_addrs {
    RENDER_SYMBOLIC = 1,
    RENDER_RAW = 2,
    RENDER_BOTH = 3,
};

typedef struct render_options {
    render_format format;
    int addrs;          /* enum render_addrs */
    int lines;          /* append file:line of the instruction (MadT) */
} render_options;

typedef struct renderer renderer;

/* sym may be NULL when only raw output is wanted. */
renderer *renderer_create(symbolizer *sym, const render_options *opt,
                          FILE *out);
/* Flushes and frees r. */
void renderer_destroy(renderer *r);
/* Writes what r holds to its output (access lines are buffered in r): before
 * anything else writes there. */
void renderer_flush(renderer *r);

/* Applies an event to the heap map without printing it (used to replay a
 * parent's allocations for a forked child's trace). */
void renderer_learn(renderer *r, const memtap_event *ev);

/* Prints the header line of formats that have one. */
void renderer_begin(renderer *r);
/* Prints one event (and updates the heap map). */
void renderer_event(renderer *r, const memtap_event *ev);
/* Prints n events of thread tid in a row (memtap_trace_next_run's). */
void renderer_run(renderer *r, const memtap_record *recs, size_t n,
                  uint32_t tid);
/* r as a tool of the offline interface: runs printed, flushed at the end
 * (r stays the caller's to destroy). */
trace_tool renderer_tool(renderer *r);

/* Whether a record kind is a data access Table I lines show (L S Y W
 * G). */
int render_is_access_kind(uint8_t kind);

#endif
