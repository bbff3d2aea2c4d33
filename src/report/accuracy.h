/*
 * accuracy.h - how much of a run's memory accesses a selectively
 * instrumented copy recovers, measured against the non-selective trace of
 * the same input, chunk by chunk (the measured counterpart of the static
 * MA and AIA estimates).
 */
#ifndef MEMTAP_REPORT_ACCURACY_H
#define MEMTAP_REPORT_ACCURACY_H

#include <stddef.h>
#include <stdint.h>

typedef struct accuracy_result {
    uint64_t accesses;      /* in the non-selective trace */
    uint64_t recovered;     /* sum over its chunks of min(selective, full) */
    uint64_t selective;     /* accesses the selective trace stands for */
    uint64_t unmatched;     /* ... in chunks the full trace never touched */
    uint64_t chunks;        /* chunks the full trace touched */
    uint64_t chunks_found;  /* ... that the selective trace touched too */
} accuracy_result;

/* Compares the two traces with chunks of `chunk` bytes.  Returns 0, or -1
 * with the reason in err. */
int accuracy_compare(const char *selective, const char *full, uint64_t chunk,
                     accuracy_result *out, char *err, size_t cap);

#endif
