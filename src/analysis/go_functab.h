/*
 * go_functab.h - the function starts a Go binary lists in its .gopclntab
 * (the table Go's runtime finds functions by): every Go function's entry
 * and extent, which stripped Go binaries keep while they have no symbols
 * and no FDEs for Go code.
 */
#ifndef MEMTAP_ANALYSIS_GO_FUNCTAB_H
#define MEMTAP_ANALYSIS_GO_FUNCTAB_H

#include <stddef.h>
#include <stdint.h>

/* Calls fn(arg, start, size) for each function of the .gopclntab bytes
 * [data, data+n) (Go 1.2 to 1.22's layouts, 64-bit), in address order;
 * stops at fn's first non-zero return and returns it.  A table this does
 * not recognise, or one whose entries are out of order, gives nothing
 * (0): the listing is a hint, never trusted past its own checks. */
int go_functab_each(const uint8_t *data, size_t n,
                    int (*fn)(void *arg, uint64_t start, uint64_t size),
                    void *arg);

#endif
