/*
 * shadow_report.h - the reports of the shadow-memory tools (memtap heat,
 * share, uninit) from the summary records they wrote into a trace.
 */
#ifndef MEMTAP_REPORT_SHADOW_REPORT_H
#define MEMTAP_REPORT_SHADOW_REPORT_H

#include <stdio.h>

#include "symbols/symbolizer.h"

typedef struct tool_report_options {
    const char *tool;    /* "heat", "share" or "uninit" */
    unsigned top;        /* rows per table */
    unsigned chunk;      /* heat: the chunk size, when no record says */
    int json;            /* one JSON object instead of text */
} tool_report_options;

/* Walks the trace from its start and prints the tool's report.  0, or a
 * negative trace status (MEMTAP_E_NOMEM when memory runs out). */
int tool_report(memtap_trace *t, symbolizer *sym,
                const tool_report_options *opt, FILE *out);

#endif
