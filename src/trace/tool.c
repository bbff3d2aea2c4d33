/*
 * tool.c - the driver of the offline tool interface (trace/tool.h): one
 * read-ahead walk, every run to every tool, then their finish.
 */
#include "trace/tool.h"
#include "trace/walk.h"

/* One run to one tool. */
static int run_tool(const trace_tool *tool, const memtap_record *recs, size_t n,
                    uint32_t tid)
{
    if (tool->run)
        return tool->run(tool->self, recs, n, tid);
    for (size_t i = 0; i < n; i++) {
        memtap_event ev = { recs[i], tid };
        int rc = tool->event(tool->self, &ev);
        if (rc)
            return rc;
    }
    return 0;
}

static int thread_selected(const trace_selection *sel, uint32_t tid)
{
    for (size_t i = 0; i < sel->ntids; i++)
        if (sel->tids[i] == tid)
            return 1;
    return sel->ntids == 0;
}

static int selected(const trace_selection *sel, int thread,
                    const memtap_record *r, uint32_t tid)
{
    int in = thread && r->seq >= sel->seq_lo && r->seq <= sel->seq_hi;
    if (sel->keep) /* asked of every record: it may follow the heap */
        in = sel->keep(sel->keep_arg, r, tid) && in;
    return in;
}

/* Tells the tools that take times when the records from lo on of the
 * run `when` times were made (its `of` 0 when the trace holds none). */
static void tell_time(const trace_tool *tools, size_t ntools, const trace_clock *when,
                      size_t lo)
{
    trace_clock c = *when;
    c.at += lo;
    for (size_t i = 0; i < ntools; i++)
        if (tools[i].time)
            tools[i].time(tools[i].self, &c);
}

/* One run to every tool: whole, or cut where the selection starts or
 * stops selecting, the pieces it leaves out to the tools' learn. */
static int run_tools(const trace_tool *tools, size_t ntools,
                     const trace_selection *sel, const trace_clock *when,
                     const memtap_record *recs, size_t n, uint32_t tid)
{
    int rc = 0;
    if (!sel) {
        tell_time(tools, ntools, when, 0);
        for (size_t i = 0; i < ntools && !rc; i++)
            rc = run_tool(&tools[i], recs, n, tid);
        return rc;
    }
    int thread = thread_selected(sel, tid);
    size_t from = 0;
    int in = n ? selected(sel, thread, &recs[0], tid) : 0;
    for (size_t to = 1; to <= n && !rc; to++) {
        int next = to < n ? selected(sel, thread, &recs[to], tid) : !in;
        if (next == in) /* each record asked once: keep may follow the heap */
            continue;
        tell_time(tools, ntools, when, from);
        for (size_t i = 0; i < ntools && !rc; i++) {
            if (in)
                rc = run_tool(&tools[i], recs + from, to - from, tid);
            else if (tools[i].learn)
                rc = tools[i].learn(tools[i].self, recs + from, to - from, tid);
        }
        from = to;
        in = next;
    }
    return rc;
}

int trace_tools_walk(memtap_trace *t, const trace_tool *tools, size_t ntools,
                     void (*progress)(void *arg, uint64_t records), void *arg)
{
    const trace_selection *sel = trace_selected(t);
    if (sel && sel->keep_begin)
        sel->keep_begin(sel->keep_arg);
    trace_walk *w = trace_walk_open(t);
    const memtap_record *recs;
    uint32_t tid;
    int n, rc = 0;
    while (!rc && (n = w ? trace_walk_next(w, &recs, &tid) : MEMTAP_E_NOMEM) != 0) {
        if (n < 0) {
            rc = n;
            break;
        }
        trace_clock when;
        trace_walk_clock(w, &when);
        rc = run_tools(tools, ntools, sel, &when, recs, (size_t)n, tid);
        if (!rc && progress)
            progress(arg, (uint64_t)n);
    }
    trace_walk_close(w);
    for (size_t i = 0; i < ntools; i++)
        if (tools[i].finish) {
            int r = tools[i].finish(tools[i].self, rc);
            if (!rc)
                rc = r;
        }
    return rc;
}

typedef struct before {
    uint64_t until;
    int (*fn)(void *arg, const memtap_event *ev);
    void *arg;
} before;

#define BEFORE_DONE (-0x7fff) /* no memtap_status: the point is reached */

static int before_event(void *self, const memtap_event *ev)
{
    before *b = self;
    return ev->rec.seq >= b->until ? BEFORE_DONE : b->fn(b->arg, ev);
}

int trace_walk_before(memtap_trace *t, uint64_t until,
                      int (*fn)(void *arg, const memtap_event *ev), void *arg)
{
    before b = { until, fn, arg };
    trace_tool tool = { .self = &b, .event = before_event };
    int rc = trace_tools_walk(t, &tool, 1, NULL, NULL);
    return rc == BEFORE_DONE ? 0 : rc;
}
