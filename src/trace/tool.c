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

int trace_tools_walk(memtap_trace *t, const trace_tool *tools, size_t ntools,
                     void (*progress)(void *arg, uint64_t records), void *arg)
{
    trace_walk *w = trace_walk_open(t);
    const memtap_record *recs;
    uint32_t tid;
    int n, rc = 0;
    while (!rc && (n = w ? trace_walk_next(w, &recs, &tid) : MEMTAP_E_NOMEM) != 0) {
        if (n < 0) {
            rc = n;
            break;
        }
        for (size_t i = 0; i < ntools && !rc; i++)
            rc = run_tool(&tools[i], recs, (size_t)n, tid);
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
    trace_tool tool = { &b, NULL, before_event, NULL };
    int rc = trace_tools_walk(t, &tool, 1, NULL, NULL);
    return rc == BEFORE_DONE ? 0 : rc;
}
