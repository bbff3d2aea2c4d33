/*
 * symbolizer.h - turns the numbers of a trace into the names of the user's
 * source: code addresses as function+offset (and file:line), data addresses
 * as variable/field, ELF symbol, section or region plus offset.  Works from
 * the trace's module table and maps snapshot after the run; heap names come
 * from heapmap.h and are combined by the renderers.
 */
#ifndef MEMTAP_SYMBOLS_SYMBOLIZER_H
#define MEMTAP_SYMBOLS_SYMBOLIZER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "memtap/trace.h"

typedef struct symbolizer symbolizer;

/* Builds a symbolizer for the trace's modules.  Binaries are opened on
 * first use; a missing binary or one whose build-id differs from the traced
 * one is reported once on warn (may be NULL) and its addresses stay raw. */
int symbolizer_create(const memtap_trace *t, FILE *warn, symbolizer **out);
void symbolizer_destroy(symbolizer *s);

/* "function+off", "module+0xoff" or "0xaddr". */
void symbolizer_code(symbolizer *s, uint64_t pc, char *buf, size_t cap);

/* "file:line" of pc; returns 0 when unknown. */
int symbolizer_line(symbolizer *s, uint64_t pc, char *buf, size_t cap);

/* Static data: "var.field[2]+off", "symbol+off", "module:.section+off";
 * returns 0 (and leaves buf alone) when addr is in no module. */
int symbolizer_data(symbolizer *s, uint64_t addr, char *buf, size_t cap);

/* Name of the memory region holding addr: "[heap]", "[stack]", "[prog]"
 * (a module's basename), "[anon]", ...; "[unknown]" when nothing holds it.
 * Blocks of the heap map are the caller's to name first. */
const char *symbolizer_region(symbolizer *s, uint64_t addr);

/* Path of the module with the trace's module id, or NULL. */
const char *symbolizer_module_path(const symbolizer *s, uint64_t id);

/* Start of the region symbolizer_region() named, for "[region]+off". */
uint64_t symbolizer_region_start(symbolizer *s, uint64_t addr);

#endif
