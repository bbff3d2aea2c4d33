/*
 * report/cachesim.h - a data cache model fed from a trace, its misses
 * named after the program's objects: a first level (D1) per thread and a
 * shared last level (LL), set-associative, least recently used,
 * write-allocate, LL looked up on a D1 miss (as Cachegrind models them),
 * the D1s kept coherent: a write takes the line out of every other
 * thread's D1.  The threads' events are simulated in the order of their
 * sequence numbers.  Every access a record stands for (trace/accesses.h)
 * is cut at line boundaries; each piece is one access of its line.  A D1
 * miss on a line the thread never touched before is compulsory; one on a
 * line another thread's write took is a coherence miss, true sharing when
 * the access touches a byte written by another thread since, else false
 * sharing; one a fully associative LRU cache of D1's size misses too is a
 * capacity miss, any other a conflict miss.
 */
#ifndef MEMTAP_REPORT_CACHESIM_H
#define MEMTAP_REPORT_CACHESIM_H

#include <stdint.h>
#include <stdio.h>

#include "memtap/trace.h"
#include "report/cache_model.h"
#include "symbols/symbolizer.h"

enum { CACHESIM_TEXT = 0, CACHESIM_JSON, CACHESIM_PAGE };

typedef struct cachesim_options {
    cache_geometry d1, ll;
    int top;             /* objects and instructions listed */
    int json;            /* CACHESIM_JSON: JSON (every object, the top
                            instructions) instead of text; CACHESIM_PAGE:
                            that JSON in an HTML page with charts */
    FILE *misses;        /* every D1 miss as a CSV line (seq, tid, pc,
                            address, level, cause, object), or NULL */
    int fields;          /* count per field too (cachesim_fields.h): a
                            hash lookup per access */
    memtap_trace *follow; /* for a trace still being written: the
                            follower of its tables (trace/follow.h,
                            TRACE_FOLLOW_META) the symbolizer was made
                            from, which the names take in as it grows;
                            else NULL */
} cachesim_options;

/* The model alone, for a walk of someone else's (memtap export): events
 * in, what each met out. */
typedef struct cachesim cachesim;

/* What became of one event's accesses in the model. */
typedef struct cachesim_outcome {
    uint32_t lines;      /* line accesses it stands for */
    uint32_t d1_misses;  /* of them, misses in the thread's D1 */
    uint32_t ll_misses;  /* ... and in LL */
    const char *cause;   /* the first D1 miss's ("compulsory", "capacity",
                            "conflict", "true sharing", "false sharing"),
                            or NULL */
} cachesim_outcome;

/* A model of this geometry; NULL when out of memory. */
cachesim *cachesim_create(const cache_geometry *d1, const cache_geometry *ll);
/* Runs ev's accesses (if any) through the model, in the order of the
 * events given, and says what became of them in *out (may be NULL).  0,
 * or 1 when out of memory. */
int cachesim_event(cachesim *s, const memtap_event *ev, cachesim_outcome *out);
void cachesim_destroy(cachesim *s);

/* Runs the model over t (opened, at its start) and prints to out the
 * totals, the objects by D1 misses with their reuse distances, and the
 * instructions by D1 misses.  0, or a negative status, or 1 when out of
 * memory. */
int cachesim_report(memtap_trace *t, symbolizer *sym,
                    const cachesim_options *opt, FILE *out);

#endif
