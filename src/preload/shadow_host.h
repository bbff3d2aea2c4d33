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

#include "tracer.h"

/* Reads MEMTAP_TOOL, MEMTAP_TOOL_CHUNK and MEMTAP_TOOL_CHECK_ONCE (after
 * the recorder's start). */
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

/* The program's mappings change: [start, end) is gone; a mapping moved;
 * a MAP_FIXED mapping of [addr, addr+len) is about to be made. */
void shadow_host_unmapped(uintptr_t start, uintptr_t end);
void shadow_host_moved(uintptr_t old, size_t old_len, uintptr_t new_addr,
                 size_t new_len);
void shadow_host_before_fixed(uintptr_t addr, size_t len);

/* Appends "tool=NAME" and the shadow memory's figures to the closing
 * note. */
struct fmt_buf;
void shadow_host_end_stats(struct fmt_buf *b);

#endif
