/*
 * csv_rows.h - trace events as CSV rows (memtap show --format csv): the
 * record's fields, and with symbolic names the data, region, code and
 * line columns, quoted by RFC 4180 where they need it.
 */
#ifndef MEMTAP_REPORT_CSV_ROWS_H
#define MEMTAP_REPORT_CSV_ROWS_H

#include <stdint.h>
#include <stdio.h>

#include "line_buf.h"
#include "memtap/trace.h"
#include "symbols/namer.h"

typedef struct csv_rows csv_rows;

/* Rows named through names and sym (symbolic: the four name columns too;
 * sym may be NULL without them); NULL when out of memory. */
csv_rows *csv_rows_create(symbolizer *sym, namer *names, int symbolic);
void csv_rows_destroy(csv_rows *c);

/* The header line. */
void csv_rows_header(const csv_rows *c, FILE *out);

/* One field as RFC 4180 writes it: quoted when it holds a comma, quote
 * or newline (quotes doubled). */
void csv_field(FILE *o, const char *s);
/* The row of x, an event of thread tid, built in lines (or, when a field
 * needs quoting or names are long, printed to its stream after it). */
void csv_row(csv_rows *c, line_buf *lines, const memtap_record *x,
             uint32_t tid);

#endif
