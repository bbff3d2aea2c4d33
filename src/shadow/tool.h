/*
 * shadow/tool.h - the shadow-memory tools (heat, share, uninit): online
 * analyses that keep metadata per application address instead of a trace,
 * and write a summary as trace records when memory goes away and at exit.
 *
 * An engine (the preload library today, rewritten programs later) hosts at
 * most one tool per process.  It reports the program's accesses, block
 * operations and heap calls; the tool's summary records go back through the
 * host's record function into the .mtr file, where the memtap command names
 * them with the symbolizer.  Everything here runs inside the traced process
 * (in signal handlers too): no malloc, no stdio, no locks.
 */
#ifndef MEMTAP_SHADOW_TOOL_H
#define MEMTAP_SHADOW_TOOL_H

#include <stdint.h>

#include "memtap/shadow.h"
#include "memtap/trace.h"

/* Writes one summary record (the host fills seq and thread). */
typedef void (*tool_record_fn)(uint8_t kind, uint64_t pc, uint64_t addr,
                             uint64_t size, uint64_t addr2, uint64_t aux);

/* The host hears that the instruction at pc needs checking no more (its
 * accesses may stop coming: rewritten code then stops logging them). */
typedef void (*tool_passed_fn)(uint64_t pc);

typedef struct tool_options {
    uint32_t chunk;        /* heat: bytes per counter (power of two, >= 8) */
    int check_once;        /* uninit: an instruction whose read was found
                              initialized is not checked again */
    tool_record_fn record;
    tool_passed_fn passed; /* with check_once, or NULL */
} tool_options;

typedef struct shadow_tool {
    const char *name;
    /* Creates the tool's shadow space; returns 0 or a negative status. */
    int (*init)(const tool_options *opt, memtap_shadow **space);
    /* A load or store of size bytes at addr by the instruction at pc; rc
     * is the host's reference cache for that instruction. */
    void (*access)(memtap_shadow_thread *t, memtap_shadow_ref *rc,
                   uint64_t pc, uint64_t addr, uint32_t size, int store);
    /* Block operations: Y (dst, src), W (dst), G (src = dst argument). */
    void (*block)(memtap_shadow_thread *t, uint8_t kind, uint64_t pc,
                  uint64_t dst, uint64_t src, uint64_t len);
    /* Heap blocks: allocated (zeroed for calloc; may be NULL), reallocated,
     * released. */
    void (*alloc)(memtap_shadow_thread *t, uint64_t addr, uint64_t size,
                  int zeroed);
    void (*realloc)(memtap_shadow_thread *t, uint64_t addr, uint64_t size,
                    uint64_t old, uint64_t old_size);
    void (*release)(memtap_shadow_thread *t, uint64_t addr, uint64_t size);
    /* In a forked child: forget what belongs to the parent's summary. */
    void (*forked)(void);
    /* Writes what is left (at exit). */
    void (*finish)(void);
} shadow_tool;

extern const shadow_tool tool_heat, tool_share, tool_uninit;

/* The tool named name ("heat", "share", "uninit"), or NULL. */
const shadow_tool *tool_by_name(const char *name);

/* Calls fn for each piece of [addr, addr+len) whose shadow is contiguous
 * (one unit at most), with the shadow of the piece's first byte. */
typedef void (*tool_span_fn)(void *ctx, uint8_t *shadow, uint64_t lo,
                             uint64_t n);
void tool_each_span(memtap_shadow_thread *t, uint64_t addr, uint64_t len,
                    tool_span_fn fn, void *ctx);

/* Writes out and forgets the metadata of [lo, hi); shadow is that of lo's
 * granule (heat and share: their summaries). */
typedef void (*tool_harvest_fn)(uint64_t lo, uint64_t hi, void *shadow);

/* Harvests the granules (grain bytes) that start inside a released heap
 * block. */
void tool_harvest_block(memtap_shadow_thread *t, uint64_t addr,
                        uint64_t size, uint64_t grain, tool_harvest_fn fn);
/* Harvests all metadata the kernel holds pages for (at exit). */
void tool_harvest_all(memtap_shadow *s, tool_harvest_fn fn);

#endif
