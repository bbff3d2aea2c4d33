/*
 * profile_print.h - a report's profile (profile.h) as text and as JSON.
 */
#ifndef MEMTAP_REPORT_PROFILE_PRINT_H
#define MEMTAP_REPORT_PROFILE_PRINT_H

#include <stddef.h>
#include <stdio.h>

#include "report/profile.h"

/* What the report says about the trace itself. */
typedef struct profile_meta {
    const char *path;     /* the trace file */
    const char *program;  /* the traced program's file */
    uint32_t pid;
    int complete;         /* nothing known to be missing */
    const char *selection; /* the accesses counted, when not all: "threads
                              12, 13; events 100 to 200" (NULL: all) */
} profile_meta;

/* The sections of `memtap report`, top lines each. */
void profile_print_text(const profile *p, const profile_meta *m, FILE *o,
                        size_t top);

/* Everything, as one JSON object (its schema: doc/report.md). */
void profile_print_json(const profile *p, const profile_meta *m, FILE *o);

#endif
