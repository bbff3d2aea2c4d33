/*
 * entries.h - where code may be entered other than by falling into it,
 * whatever the control-flow graph knows: a per-byte map of the file's
 * executable sections (entries.c).  A linear sweep of every executable
 * section (resynchronised at function starts) gives the instruction
 * boundaries a second decoder sees; every direct branch or call target
 * either decoding finds, every return address, the first instruction
 * after a jump, return or halt, every code address the data holds, what
 * code takes the address of, the cases of relative jump tables behind
 * any rip-relative table base, and every block the graph says is entered
 * are possible entries.  The rewriter patches a window only where both
 * decodings agree and no possible entry lies under its jump.
 */
#ifndef MEMTAP_ANALYSIS_ENTRIES_H
#define MEMTAP_ANALYSIS_ENTRIES_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/cfg.h"

enum {
    ENTRY_MAY = 1,      /* code may be entered here */
    ENTRY_SWEEP = 2,    /* the linear sweep starts an instruction here */
};

typedef struct entry_map {
    uint64_t lo, hi;    /* [lo, hi): from the first executable section to
                           the end of the last */
    uint8_t *bits;      /* ENTRY_* per byte of [lo, hi) */
    uint64_t entries;   /* addresses marked ENTRY_MAY */
    uint64_t disagree;  /* graph instructions the sweep does not start */
} entry_map;

/* Builds the map of cfg's image.  Returns 0 or ELF_E_NOMEM. */
int entry_map_build(const cfg_program *cfg, entry_map **out);
void entry_map_free(entry_map *m);

static inline uint8_t entry_bits(const entry_map *m, uint64_t a)
{
    return a >= m->lo && a < m->hi ? m->bits[a - m->lo] : 0;
}

/* Whether code may be entered at some byte of [from, to). */
int entry_map_any(const entry_map *m, uint64_t from, uint64_t to);

#endif
