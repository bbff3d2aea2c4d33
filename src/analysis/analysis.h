/*
 * analysis.h - the static analysis of a whole ELF file: blocks (cfg.h),
 * per-block stability analysis and BID expressions, the selection of each
 * block (select.h), and totals per function and for the file, plus the
 * whole-program accuracy weighted by a profile of block executions.
 */
#ifndef MEMTAP_ANALYSIS_ANALYSIS_H
#define MEMTAP_ANALYSIS_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/cfg.h"
#include "analysis/select.h"

typedef struct analysis_counts {
    uint64_t insns, blocks;
    uint64_t mem_insns;          /* with at least one explicit access */
    uint64_t n, m, W, selected;  /* sums of the blocks' figures */
    uint64_t ma_num, aia_num;
    uint64_t blocks_with_mem;
    double block_ma_sum, block_aia_sum;  /* of MA_b, AIA_b */
    uint64_t explicit_reads, explicit_writes, explicit_stack;
    uint64_t implicit_stack, implicit_string, implicit_other;
    uint64_t vsib, hints, unsupported, avx512;
    uint64_t bypass[BYPASS_RULES]; /* selected operands left out: stack,
                                      static, read-only, tested loads,
                                      ignored */
} analysis_counts;

typedef struct analysis_block {
    uint32_t first_expr;         /* into analysis.exprs */
    sel_block sel;
} analysis_block;

typedef struct analysis {
    code_image *img;
    cfg_program *cfg;
    select_params params;
    sel_expr *exprs;             /* every modelled access, by block */
    size_t nexprs;
    analysis_block *blocks;      /* parallel to cfg->blocks */
    analysis_counts *funcs;      /* parallel to img->funcs */
    analysis_counts total;
} analysis;

/* Whether the memory operand m becomes an expression: explicit data
 * accesses, and with `implicit` (select_params) the stack slots of push,
 * pop, call, ret, enter and leave. */
int analysis_models(const x86_mem *m, int implicit);

/* Analyses the file at path.  Returns 0 or an image_status. */
int analysis_run(const char *path, const select_params *p, analysis **out);
void analysis_free(analysis *a);

/* Decodes the instructions of block b in order, calling fn for each. */
int analysis_block_insns(const analysis *a, const cfg_block *b,
                         void (*fn)(const x86_insn *insn, void *arg), void *arg);

/* Whole-program accuracy weighted by block executions (section III-E). */
typedef struct analysis_weighted {
    uint64_t entries, matched;   /* profile lines; those naming a block */
    uint64_t executions;         /* of matched blocks with accesses */
    double ma, aia;              /* sum(count*MA_b) / sum(count) */
    double ma_access, aia_access;/* sum(count*num) / sum(count*n) */
    double sum_ma, sum_aia, sum_mae, sum_aiae, sum_n; /* while adding */
} analysis_weighted;

/* Adds one profile entry (a block start and its executions) to w, which
 * starts zeroed; analysis_weigh_done computes the figures. */
void analysis_weigh_add(const analysis *a, analysis_weighted *w,
                        uint64_t addr, uint64_t count);
void analysis_weigh_done(analysis_weighted *w);

/* Reads a profile: lines "ADDRESS COUNT" (address of a block start in
 * hex, execution count in decimal; '#' starts a comment).  Returns 0, or
 * -1 with a message in err. */
int analysis_weigh(const analysis *a, const char *profile,
                   analysis_weighted *out, char *err, size_t errcap);

#endif
