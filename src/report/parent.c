/*
 * parent.c - replays a forked child's inherited heap (parent.h).
 */
#include "report/parent.h"

#include "trace/info.h"

#include <stdlib.h>
#include <string.h>

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
    uint64_t fork_seq = strtoull(seq, NULL, 10);
    memtap_event ev;
    while (memtap_trace_next(p, &ev) > 0 && ev.rec.seq < fork_seq)
        fn(arg, &ev);
    memtap_trace_close(p);
    return 0;
}
