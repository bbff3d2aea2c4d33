/*
 * shadow_host.h - the shadow-memory tool libmemtap.so hosts when MEMTAP_TOOL
 * names one (heat, share, uninit): it receives the records the engines
 * produce, keeps accesses out of the trace, and writes its summary at the
 * end.  See shadow/tool.h for the tools themselves.
 */
#ifndef MEMTAP_PRELOAD_SHADOW_HOST_H
#define MEMTAP_PRELOAD_SHADOW_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "preload/record/tracer.h"

/* Reads MEMTAP_TOOL, MEMTAP_TOOL_CHUNK and MEMTAP_TOOL_CHECK_ONCE (after
 * the recorder's start); with a tool, its shadow follows the program's
 * mappings as the traced set hears of them (traced_set_listener). */
void shadow_host_init(void);
/* Whether a tool runs. */
int shadow_host_active(void);

/* What the recorder calls: whether a tool runs (accesses then go to it,
 * not the trace), each record (an access is the tool's), the ends of
 * threads and of the run (the tool's summary), a forked child (its
 * summary starts from nothing). */
extern const tracer_client shadow_host_client;

/* Usable size of the block a free or realloc is about to release (the
 * wrappers measure it while the block is still the program's). */
void shadow_host_note_block_size(uint64_t size);

/* Appends "tool=NAME" and the shadow memory's figures to the closing
 * note. */
struct fmt_buf;
void shadow_host_end_stats(struct fmt_buf *b);

#endif
