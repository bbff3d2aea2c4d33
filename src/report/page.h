/*
 * page.h - a report as one self-contained HTML page: the profile's JSON in
 * a data island, ECharts (from the npm registry, pinned in
 * npm/package-lock.json) and the page's own script and style inlined, so
 * that it opens offline from a file.
 */
#ifndef MEMTAP_REPORT_PAGE_H
#define MEMTAP_REPORT_PAGE_H

#include <stddef.h>
#include <stdio.h>

#include "report/profile_print.h"

/* Writes the page; 0, or -1 with the reason in err (memtap built without
 * ECharts). */
int page_write(const profile *p, const profile_meta *m, FILE *o, char *err,
               size_t errcap);

/* Whether this memtap can write pages (it was built with ECharts). */
int page_available(void);

/* Which page: its title and script. */
typedef enum page_kind { PAGE_REPORT, PAGE_CACHESIM } page_kind;
/* A page whose data island json(arg, o) writes; as page_write. */
int page_write_data(FILE *o, page_kind kind,
                    void (*json)(void *arg, FILE *o), void *arg, char *err,
                    size_t errcap);

#endif
