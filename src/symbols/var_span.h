/*
 * var_span.h - how the names of a range of a variable read, as the DWARF
 * walk finds it (dwarf_vars_span) and the layers above hand it on: a row
 * of scalars named by index, one scalar named by offset, or neither.
 */
#ifndef MEMTAP_SYMBOLS_VAR_SPAN_H
#define MEMTAP_SYMBOLS_VAR_SPAN_H

#include <stdint.h>

typedef enum {
    VAR_SPAN_OTHER,  /* names made by the walk each time (a union's
                        overlapping members, padding, a name cut short) */
    VAR_SPAN_ROW,    /* text, (a - from) >> shift, "]", "+N" past the
                        element's start when N > 0 */
    VAR_SPAN_SCALAR  /* text, "+N" for a - from = N > 0 */
} var_span_kind;

/* The names of the addresses a in [lo, hi), made from the text up to the
 * index or offset that comes with it. */
typedef struct var_span {
    var_span_kind kind;
    uint64_t lo, hi;
    uint64_t from;   /* ROW: the row's first element; SCALAR: its start */
    unsigned shift;  /* ROW: log2 of the element's size */
} var_span;

#endif
