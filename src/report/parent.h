/*
 * parent.h - a forked child's trace starts with the heap its parent had:
 * the parent's allocation events up to the fork, replayed from the parent
 * trace the child's names (INFO parent_trace, fork_seq).
 */
#ifndef MEMTAP_REPORT_PARENT_H
#define MEMTAP_REPORT_PARENT_H

#include "memtap/trace.h"

/* Calls fn with each of the parent's events before the fork.  Returns 0
 * (also for a trace that is no forked child's), or -1 when the parent
 * trace cannot be read. */
int parent_replay(const memtap_trace *t,
                  void (*fn)(void *arg, const memtap_event *ev), void *arg);

#endif
