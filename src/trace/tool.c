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

/* One run to every tool: whole, or cut where the selection starts or
 * stops selecting, the pieces it leaves out to the tools' learn. */
static int run_tools(const trace_tool *tools, size_t ntools,
                     const trace_selection *sel, const memtap_record *recs,
                     size_t n, uint32_t tid)
{
    int rc = 0;
    if (!sel) {
        for (size_t i = 0; i < ntools && !rc; i++)
            rc = run_tool(&tools[i], recs, n, tid);
        return rc;
    }
    int thread = thread_selected(sel, tid);
    for (size_t from = 0, to; from < n && !rc; from = to) {
        int in = thread && recs[from].seq >= sel->seq_lo && recs[from].seq <= sel->seq_hi;
        for (to = from + 1; to < n; to++)
            if (in != (thread && recs[to].seq >= sel->seq_lo &&
                       recs[to].seq <= sel->seq_hi))
                break;
        for (size_t i = 0; i < ntools && !rc; i++) {
            if (in)
                rc = run_tool(&tools[i], recs + from, to - from, tid);
            else if (tools[i].learn)
                rc = tools[i].learn(tools[i].self, recs + from, to - from, tid);
        }
    }
    return rc;
}

int trace_tools_walk(memtap_trace *t, const trace_tool *tools, size_t ntools,
                     void (*progress)(void *arg, uint64_t records), void *arg)
{
    const trace_selection *sel = trace_selected(t);
    trace_walk *w = trace_walk_open(t);
    const memtap_record *recs;
    uint32_t tid;
    int n, rc = 0;
    while (!rc && (n = w ? trace_walk_next(w, &recs, &tid) : MEMTAP_E_NOMEM) != 0) {
        if (n < 0) {
            rc = n;
            break;
        }
        rc = run_tools(tools, ntools, sel, recs, (size_t)n, tid);
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
