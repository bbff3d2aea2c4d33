/*
 * liveness.h - which of rax, rcx and rdx (the registers a trampoline may
 * use) the program may still read, across the blocks of a whole file.
 *
 * A block's live-in comes from its own instructions and the live-ins of
 * the blocks its end leads to: the next block, and a direct branch's
 * target.  Wherever the way on is not known (calls, returns, system
 * calls, indirect jumps, a branch to no block's start, code found by
 * scanning) all three are live.  The trampolines save only the live ones.
 */
#ifndef MEMTAP_REWRITE_LIVENESS_H
#define MEMTAP_REWRITE_LIVENESS_H

#include <stdint.h>

#include "analysis/analysis.h"
#include "x86/insn.h"

struct block_sum;

typedef struct liveness {
    const cfg_program *cfg;
    uint8_t *in;                 /* per block: live on entry (LIVE_* bits) */
    struct block_sum *sums;      /* per block, until solved */
} liveness;

/* Sets lv up for cfg's blocks; 0, or -1 when out of memory. */
int liveness_init(liveness *lv, const cfg_program *cfg);

/* Summarizes blocks [bi, bi + nb) from their instructions, v[0..n), as
 * the rewriter has decoded them (so that liveness_solve need not). */
void liveness_note(liveness *lv, size_t bi, size_t nb, const x86_insn *v,
                   size_t n);

/* Decodes the blocks not noted, then works out every block's live-in;
 * 0, or -1 when an instruction cannot be decoded again. */
int liveness_solve(liveness *lv, const analysis *a);
void liveness_free(liveness *lv);

/* Live at addr: a block's live-in where one starts there, else all. */
unsigned liveness_at(const liveness *lv, uint64_t addr);

/* Live before x, given what is live after it when it falls through. */
unsigned liveness_before(const liveness *lv, const x86_insn *x,
                         unsigned after);

#endif
