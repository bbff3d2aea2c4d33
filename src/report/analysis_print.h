/*
 * analysis_print.h - prints the static analysis of an ELF file (memtap
 * analyze): text tables and JSON.
 */
#ifndef MEMTAP_REPORT_ANALYSIS_PRINT_H
#define MEMTAP_REPORT_ANALYSIS_PRINT_H

#include <stdint.h>
#include <stdio.h>

#include "analysis/analysis.h"

/* The file, the parameters and the whole file's counts; with w, the
 * accuracy weighted by the executions of the profile called profile. */
void analysis_print_summary(FILE *o, const analysis *a, const char *profile,
                            const analysis_weighted *w);
/* The top functions by explicit accesses (all of them when top <= 0). */
void analysis_print_functions(FILE *o, const analysis *a, long top);
/* Every block, one line each. */
void analysis_print_blocks(FILE *o, const analysis *a);
/* Everything analysis_print_summary and _functions say, as JSON. */
void analysis_print_json(FILE *o, const analysis *a,
                         const analysis_weighted *w);

enum analysis_print_status {
    ANALYSIS_PRINT_NO_BLOCK = -1,      /* no block holds the address */
    ANALYSIS_PRINT_UNDECODABLE = -2,   /* the block's bytes do not decode */
};
/* The block holding addr in detail: 0, or an analysis_print_status. */
int analysis_print_block(FILE *o, const analysis *a, uint64_t addr);

#endif
