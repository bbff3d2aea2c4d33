/*
 * trace/follow.h - a trace read while its process still writes it (the
 * memtap command's online model): its chunks in the order they were
 * written, each handed out once it is whole, the scan going on as the
 * file grows until the writer is done.  For the memtap command; not part
 * of the installed reader.
 */
#ifndef MEMTAP_TRACE_FOLLOW_H
#define MEMTAP_TRACE_FOLLOW_H

#include <stdint.h>

#include "memtap/trace.h"

/* Told how many bytes of the file the reader has read (after each chunk,
 * and while it waits); returns whether the trace's writer may still
 * write (1), is done (0: the rest of the file is read), or the reader is
 * to stop at once (-1: the trace ends here). */
typedef int (*trace_writing_fn)(void *arg, uint64_t read);

enum {
    TRACE_FOLLOW_PUNCH = 1, /* each event chunk's whole pages are given back
                               to the file system once its records are read
                               (the chunk headers stay: a scan of the file
                               still reads) */
    TRACE_FOLLOW_META = 2,  /* the tables alone (modules, maps, info, call
                               stacks): no events, grown by
                               trace_follow_update */
};

/* Opens path, waiting for its file header while writing(arg) says the
 * writer may still come, and makes every later walk of it
 * (memtap_trace_next_run, trace/walk.h) wait for the chunks still to
 * come: the threads' records in the order their chunks were written
 * (not merged by sequence number), the end when writing(arg) is 0 and
 * the file holds no whole chunk more.  Modules, maps, sites and call
 * stacks grow as their chunks come, on the thread that reads the events
 * (a walk's reading thread): whoever names the events on another reads
 * the tables from a second follower of the file, TRACE_FOLLOW_META.
 * flags: TRACE_FOLLOW_*.  A status (MEMTAP_E_IO when no trace file
 * came). */
int trace_follow_open(const char *path, trace_writing_fn writing, void *arg,
                      int flags, memtap_trace **out);

/* A TRACE_FOLLOW_META follower takes in what its file gained: 1 when the
 * file grew, 0 when not, or a negative status. */
int trace_follow_update(memtap_trace *t);

#endif
