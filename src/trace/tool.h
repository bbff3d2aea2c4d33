/*
 * trace/tool.h - the offline tool interface: what reads a whole trace
 * (show's renderer, export's exporter, report's profile walks) is a tool
 * that takes the trace's runs of records in order and then finishes; one
 * driver walks the trace once, read ahead on a second CPU (trace/walk.h),
 * for any number of tools.  A tool is created with its options by its own
 * constructor and freed by its owner; the driver only runs it.
 */
#ifndef MEMTAP_TRACE_TOOL_H
#define MEMTAP_TRACE_TOOL_H

#include <stddef.h>
#include <stdint.h>

#include "memtap/trace.h"
#include "trace/walk.h"

typedef struct trace_tool {
    void *self;
    /* One run: n records of thread tid, in the trace's order.  0 goes on;
     * anything else ends the walk: a negative status (memtap_status), or
     * a positive error of the tool's own. */
    int (*run)(void *self, const memtap_record *recs, size_t n, uint32_t tid);
    /* Or, for a tool that takes one event at a time (run NULL): each
     * record of the run as an event, until one returns nonzero. */
    int (*event)(void *self, const memtap_event *ev);
    /* After the last run, with how the walk ended (0, or what ended it):
     * the tool's output.  0, or an error as run's.  May be NULL. */
    int (*finish)(void *self, int status);
    /* Records the walk's selection leaves out (trace_select), in order
     * with the runs: the tool keeps what they tell of the program (its
     * heap's blocks) and makes nothing of them: 0, or an error as run's.
     * May be NULL. */
    int (*learn)(void *self, const memtap_record *recs, size_t n, uint32_t tid);
    /* Before each run (or learn): when its records were made (record i
     * at trace_clock_at(clock, i) microseconds since the trace began;
     * clock->of is 0 when the trace holds no times).  May be NULL. */
    void (*time)(void *self, const trace_clock *clock);
} trace_tool;

/* Which records the walks of a trace hand their tools' run (memtap show,
 * export, report and cachesim --tid and --seq); the others go to learn. */
typedef struct trace_selection {
    const uint32_t *tids;    /* these threads' records, or all when ntids 0 */
    size_t ntids;
    uint64_t seq_lo, seq_hi; /* sequence numbers in [seq_lo, seq_hi] */
    /* and, when set, those keep says yes to: it is asked of every record
     * in order (the others too: it may follow the heap) */
    int (*keep)(void *arg, const memtap_record *r, uint32_t tid);
    void (*keep_begin)(void *arg); /* before each walk: back to the start */
    void *keep_arg;
} trace_selection;

/* Makes every later trace_tools_walk of t hand its tools only what sel
 * selects (NULL: everything).  sel must outlive those walks. */
void trace_select(memtap_trace *t, const trace_selection *sel);
const trace_selection *trace_selected(const memtap_trace *t);

/* The threads whose events the trace holds, as its scan found them: how
 * many, their tids (the first max) into tids. */
size_t trace_threads(const memtap_trace *t, uint32_t *tids, size_t max);

/* Walks t from where its reader stands to the end, each run handed to
 * every tool in turn (and counted to progress(arg, records) when given),
 * then finishes every tool.  Returns 0, or the first error: the walk's
 * status, a run's, or a finish's. */
int trace_tools_walk(memtap_trace *t, const trace_tool *tools, size_t ntools,
                     void (*progress)(void *arg, uint64_t records), void *arg);

/* The same walk for one tool of the events before a point: each event of
 * t before the first whose sequence number is `until` or later, to
 * fn(arg, ev) (0 goes on).  Returns 0 when it got there or to the end,
 * else the walk's status or fn's error. */
int trace_walk_before(memtap_trace *t, uint64_t until,
                      int (*fn)(void *arg, const memtap_event *ev), void *arg);

#endif
