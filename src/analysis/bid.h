/*
 * bid.h - BID address expressions {b, i, d} (the selective-instrumentation
 * paper, section III-A): template RRI when the base is a register (dynamic
 * data), IRR when the base is an immediate (absolute, RIP-relative or
 * non-PIC static data; the index is revised to index*scale).  Registers are
 * compared with their incarnation from stability analysis (section III-B);
 * the distance functions are Figure 1's with score triplets <s2,s1,s3>
 * (RRI) and <s3,s2,s1> (IRR).
 */
#ifndef MEMTAP_ANALYSIS_BID_H
#define MEMTAP_ANALYSIS_BID_H

#include <stdint.h>

#include "analysis/image.h"
#include "x86/insn.h"

typedef enum bid_template { BID_RRI = 0, BID_IRR = 1 } bid_template;

/* Register ids in expressions: 0 = nil, 1..16 = rax..r15, 17 = fs base,
 * 18 = gs base; BID_REG32 marks 32-bit address registers. */
enum { BID_FS = 17, BID_GS = 18, BID_REG32 = 0x40 };

typedef struct bid_reg {
    uint8_t id;
    uint8_t scale;     /* 1, 2, 4, 8 (0 for nil) */
    uint16_t inc;      /* incarnation */
} bid_reg;

typedef struct bid_expr {
    uint8_t tmpl;      /* bid_template */
    bid_reg r1, r2;    /* RRI: b, i.   IRR: i, d */
    int64_t imm;       /* RRI: d.      IRR: b (a link-time address) */
} bid_expr;

typedef struct bid_scores {
    unsigned s1, s2, s3;
} bid_scores;

/* Number of general registers tracked by stability analysis. */
#define BID_NREGS 16

/* Builds the expression of memory operand m with the current incarnations
 * inc[0..15] (rax..r15).  Returns 0, or -1 when the operand has no BID
 * form (fs/gs with both base and index). */
int bid_from_mem(const x86_mem *m, const uint16_t inc[BID_NREGS],
                 const code_image *img, bid_expr *e);

/* Equation (1): same template, fields and incarnations. */
int bid_equal(const bid_expr *a, const bid_expr *b);

/* Figure 1's delta for two expressions of one template, chunk size C. */
unsigned bid_distance(const bid_expr *a, const bid_expr *b,
                      const bid_scores *s, uint64_t chunk);

/* Checks s1 < s2 < s3 and s1 + s2 < s3. */
int bid_scores_valid(const bid_scores *s);

/* Writes the expression as "RRI{%rbp.0, nil, -0x4}". */
void bid_format(const bid_expr *e, char *buf, unsigned cap);

#endif
