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

/* Opens path, waiting for its file header while writing(arg) says the
 * writer may still come, and makes every later walk of it
 * (memtap_trace_next_run, trace/walk.h) wait for the chunks still to
 * come: the threads' records in the order their chunks were written
 * (not merged by sequence number), the end when writing(arg) is 0 and
 * the file holds no whole chunk more.  Modules, maps, sites and call
 * stacks grow as their chunks come.  With `punch`, each event chunk's
 * whole pages are given back to the file system once its records are
 * read (the chunk headers stay: a scan of the file still reads).  A
 * status (MEMTAP_E_IO when no trace file came). */
int trace_follow_open(const char *path, trace_writing_fn writing, void *arg,
                      int punch, memtap_trace **out);

/* Whether t is followed (trace_follow_open). */
int trace_following(const memtap_trace *t);

#endif
