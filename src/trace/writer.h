/*
 * writer.h - a simple single-threaded .mtr writer for the memtap command,
 * tests and tools (it allocates; the in-process tracer has its own path).
 */
#ifndef MEMTAP_TRACE_WRITER_H
#define MEMTAP_TRACE_WRITER_H

#include "memtap/trace.h"

typedef struct trace_writer trace_writer;

/* Creates (truncating) path and writes the file header. */
int trace_writer_create(const char *path, uint32_t pid, trace_writer **out);
/* Writes an INFO chunk ("key=value\n" lines). */
int trace_writer_info(trace_writer *w, const char *text);
/* Writes a MAPS chunk (text of /proc/PID/maps). */
int trace_writer_maps(trace_writer *w, const char *text);
/* Writes a MODULES chunk holding one module. */
int trace_writer_module(trace_writer *w, const memtap_module *m);
/* Buffers one record of thread tid; a packed chunk is written when the
 * buffer is full or the thread changes. */
int trace_writer_event(trace_writer *w, uint32_t tid, const memtap_record *r);
/* Writes n records of thread tid as one chunk of their own, plain (the
 * first trace format's MEMTAP_CHUNK_EVENTS; the buffered ones first). */
int trace_writer_chunk(trace_writer *w, uint32_t tid,
                       const memtap_record *recs, size_t n);
/* Writes the buffered records as one chunk. */
int trace_writer_flush(trace_writer *w);
/* Flushes, closes and frees the writer (also on error paths). */
int trace_writer_close(trace_writer *w);

#endif
