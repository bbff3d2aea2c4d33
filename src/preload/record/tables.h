/*
 * tables.h - the rows of the trace's tables (trace/format.h's TABLE
 * chunks: the call stacks of heap events) on their way to the file:
 * gathered, and written as one chunk when enough are, and always before
 * any chunk of events, which may name them (tables.c).
 */
#ifndef MEMTAP_PRELOAD_TABLES_H
#define MEMTAP_PRELOAD_TABLES_H

#include <stddef.h>
#include <stdint.h>

/* The most bytes of rows one call adds. */
#define TABLES_ROWS_MAX 1024u

/* Adds rows of table (enum memtap_table_kind), laid out as the table
 * lays them out, to what is written before the next chunk of events.
 * 0, or -1 when they cannot be (no trace, no memory, or the calling
 * thread interrupted itself adding rows: a signal handler's). */
int tables_add(uint32_t table, uint32_t rows, const void *raw, size_t len);

/* Writes the rows added so far, unless the calling thread is already
 * writing them (a signal handler's call): before a chunk of events.
 * Unless wait, also not while another thread adds or writes rows: its
 * rows reach the file a moment later (the reader takes the tables
 * wherever they are; a chunk of events is written now, whose thread may
 * hold its buffer's lock, which others wait for only so long). */
void tables_before_events(int wait);

/* In a forked child: the parent's rows are the parent's to write. */
void tables_after_fork_child(void);

#endif
