/*
 * parent.c - replays a forked child's inherited heap (parent.h).
 */
#include "report/parent.h"

#include "trace/info.h"
#include "trace/tool.h"

#include <stdlib.h>
#include <string.h>

typedef struct replay {
    void (*fn)(void *arg, const memtap_event *ev);
    void *arg;
} replay;

static int replay_event(void *self, const memtap_event *ev)
{
    const replay *r = self;
    r->fn(r->arg, ev);
    return 0;
}

int parent_replay(const memtap_trace *t,
                  void (*fn)(void *arg, const memtap_event *ev), void *arg)
{
    char parent[4096], seq[32];
    trace_info_copy(t, "parent_trace", parent, sizeof parent);
    trace_info_copy(t, "fork_seq", seq, sizeof seq);
    if (!parent[0])
        return 0;
    memtap_trace *p;
    if (memtap_trace_open(parent, &p) != MEMTAP_OK)
        return -1;
    replay r = { fn, arg };
    /* the parent's trace as far as it was read: no error of its own */
    trace_walk_before(p, strtoull(seq, NULL, 10), replay_event, &r);
    memtap_trace_close(p);
    return 0;
}
