/*
 * trace/walk.h - a trace's events in order as runs of one thread's
 * records (as memtap_trace_next_run gives them), read ahead on a second
 * CPU when the process may use one (walk.c).  For the memtap command's
 * walks; not part of the installed reader.
 */
#ifndef MEMTAP_TRACE_WALK_H
#define MEMTAP_TRACE_WALK_H

#include <stdint.h>

#include "memtap/trace.h"

#include <stddef.h>

typedef struct trace_walk trace_walk;

/* A walk over t from where its reader stands (t is the walk's until
 * trace_walk_close); NULL when out of memory. */
trace_walk *trace_walk_open(memtap_trace *t);
/* The next run: how many records (*recs, valid until the next call, all
 * of thread *tid), 0 at the end, or a negative status; the end's answer
 * stays. */
int trace_walk_next(trace_walk *w, const memtap_record **recs,
                    uint32_t *tid);
/* When the records of a run were made (memtap_trace_run_time): record i
 * of the run at trace_clock_at(c, i) microseconds since the trace began,
 * the same whichever runs a chunk's records were cut into. */
typedef struct trace_clock {
    uint64_t from, span;     /* the chunk's time: from, from + span */
    uint64_t at, of;         /* the run's first record is the chunk's
                                at-th of `of` */
} trace_clock;

static inline uint64_t trace_clock_at(const trace_clock *c, uint64_t i)
{
    return c->from + c->span * (c->at + i + 1) / c->of;
}

/* The clock of the run memtap_trace_next_run returned last: 1, or 0 (its
 * `of` 0) when the trace holds no times. */
int trace_run_clock(const memtap_trace *t, trace_clock *c);
/* The same of the run trace_walk_next returned last. */
int trace_walk_clock(const trace_walk *w, trace_clock *c);
/* Ends the walk, before its end too, and frees w. */
void trace_walk_close(trace_walk *w);

/* Keeping the runs memtap_trace_next_run lends past the next call, for a
 * walk that hands them to another thread: from now on a buffer of
 * records a cursor of t is done with is kept, marked with stamp (the
 * latest one given), until trace_keep_until(t, s) with s > stamp;
 * trace_keep_end frees them all and ends the keeping. */
void trace_keep_stamp(memtap_trace *t, uint64_t stamp);
void trace_keep_until(memtap_trace *t, uint64_t stamp);
void trace_keep_end(memtap_trace *t);

#endif
