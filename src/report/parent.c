/*
 * parent.c - replays a forked child's inherited heap (parent.h).
 */
#include "report/parent.h"

#include <stdlib.h>
#include <string.h>

/* An INFO value up to its newline, or "" when absent. */
static void info(const memtap_trace *t, const char *key, char *buf,
                 size_t cap)
{
    const char *v = memtap_trace_info(t, key);
    size_t n = v ? strcspn(v, "\n") : 0;
    if (n >= cap)
        n = cap - 1;
    memcpy(buf, v ? v : "", n);
    buf[n] = '\0';
}

int parent_replay(const memtap_trace *t,
                  void (*fn)(void *arg, const memtap_event *ev), void *arg)
{
    char parent[4096], seq[32];
    info(t, "parent_trace", parent, sizeof parent);
    info(t, "fork_seq", seq, sizeof seq);
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
