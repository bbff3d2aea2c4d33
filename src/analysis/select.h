/*
 * select.h - the per-block selection of the selective-instrumentation
 * paper (sections III-C to III-E): equivalence classes of BID expressions,
 * their representatives' values v_e = <|[e]|, mean distance>, the iterative
 * (0,1)-knapsack with W = ceil(omega * m), and MA_b / AIA_b (equations 4
 * and 5).  A non-selective mode instruments every memory instruction.
 */
#ifndef MEMTAP_ANALYSIS_SELECT_H
#define MEMTAP_ANALYSIS_SELECT_H

#include <stdint.h>

#include "analysis/bid.h"

/* The bypass rules: operands left uninstrumented whatever the selection
 * says, because their accesses are statically known to be ones the user
 * does not want recorded. */
enum select_bypass {
    BYPASS_STACK = 1u << 0,     /* addressed from rsp (--only without
                                   stack) */
    BYPASS_STATIC = 1u << 1,    /* RIP-relative or absolute into the
                                   image's writable data (--only without
                                   static) */
    BYPASS_READ_ONLY = 1u << 2, /* RIP-relative or absolute into memory of
                                   the image that is read-only at run time
                                   (--ignore-read-only; --only without
                                   stack, whose filter drops it too) */
    BYPASS_LOADS = 1u << 3,     /* loads that do not also store: the code
                                   is tested (--tested; only the ranges of
                                   select_params.tested, if any) */
    BYPASS_IGNORED = 1u << 4,   /* RIP-relative or absolute into a range
                                   of select_params.ignore (--ignore) */
};
#define BYPASS_RULES 5
#define SELECT_IGNORE_MAX 16

/* [lo, hi) in the file's link-time addresses. */
typedef struct select_range {
    uint64_t lo, hi;
} select_range;

typedef struct select_params {
    double omega;          /* cost factor in [0, 1] */
    uint64_t chunk;        /* C, bytes (> 0) */
    bid_scores scores;     /* s1 < s2 < s3, s1 + s2 < s3 */
    int nonselective;      /* instrument every memory instruction */
    int implicit;          /* push, pop, call, ret, enter and leave's
                              stack slots are operands too (--implicit) */
    unsigned bypass;       /* enum select_bypass */
    select_range ignore[SELECT_IGNORE_MAX]; /* operands' targets */
    unsigned nignore;
    select_range tested[SELECT_IGNORE_MAX]; /* code whose loads
                                               BYPASS_LOADS skips; none:
                                               the whole file */
    unsigned ntested;
} select_params;

/* omega 0.25, C 64, scores 1, 3, 5. */
void select_params_default(select_params *p);
/* NULL when valid, else why not. */
const char *select_params_check(const select_params *p);

#define SEL_NONE UINT32_MAX

/* One explicit memory operand of a block.  The caller fills the first
 * group; select_block fills the rest. */
typedef struct sel_expr {
    uint64_t addr;         /* instruction address */
    bid_expr e;
    uint32_t size;         /* bytes accessed */
    uint8_t read, write, stack;
    uint8_t implicit;      /* a stack slot of push/pop/call/ret/leave */
    uint8_t fixed;         /* target is its address (RIP-relative, or
                              absolute in a non-PIC file) */
    uint64_t target;
    /* filled by select_block */
    uint8_t rep;           /* first of its class: the representative */
    uint8_t selected;      /* instrumented */
    uint8_t iteration;     /* knapsack iteration that selected it (1-based) */
    uint32_t cls;          /* block-relative index of its representative */
    uint32_t class_size;   /* |[e]| (representatives) */
    double mean_dist;      /* mean distance to same-template reps */
    uint32_t assoc;        /* unselected rep at distance zero from a
                              selected one: that one's index, else SEL_NONE */
    uint32_t aia_count;    /* selected reps: |[e]| plus associated classes */
} sel_expr;

typedef struct sel_block {
    uint32_t n;            /* memory-referencing expressions */
    uint32_t m;            /* classes (candidates) */
    uint32_t W;            /* knapsack size */
    uint32_t selected;     /* instrumented sites */
    uint32_t iterations;
    uint32_t ma_num;       /* sum over the knapsack of |[e]| */
    uint32_t aia_num;      /* sum over the knapsack of |[e]|^ */
} sel_block;

/* Runs the selection on the n expressions of one block, in program order.
 * Returns 0, or -1 when out of memory. */
int select_block(sel_expr *x, uint32_t n, const select_params *p,
                 sel_block *out);

#endif
