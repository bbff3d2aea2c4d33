/*
 * test_pagemap.c - the page map's spans (pagemap_span) against a page by
 * page reading of the same map: region runs of odd lengths and places,
 * eight-page steps across them, leaf edges, a reach that stops the scan,
 * and a leaf never written.
 */
#include "check.h"
#include "preload/memmap/pagemap.h"

#include <stdlib.h>

#define LEAF ((uintptr_t)1 << 15)   /* pages a leaf holds (pagemap.c) */

/* The span as a page-by-page reading gives it. */
static void brute(uintptr_t page, uint8_t mask, uintptr_t reach,
                  uintptr_t *lo, uintptr_t *hi)
{
    uintptr_t base = page - page % LEAF;
    uint8_t want = pagemap_get(page << PAGE_SHIFT) & mask;
    uintptr_t first = page, last = page + 1;
    while (first > base && page - (first - 1) <= reach &&
           (pagemap_get((first - 1) << PAGE_SHIFT) & mask) == want)
        first--;
    while (last < base + LEAF && last - page <= reach &&
           (pagemap_get(last << PAGE_SHIFT) & mask) == want)
        last++;
    *lo = first << PAGE_SHIFT;
    *hi = last << PAGE_SHIFT;
}

static void check_span(uintptr_t page, uintptr_t reach)
{
    uintptr_t lo, hi, blo, bhi;
    uint8_t state = pagemap_span(page << PAGE_SHIFT, PM_REGION_MASK, reach, &lo, &hi);
    brute(page, PM_REGION_MASK, reach, &blo, &bhi);
    CHECK_EQ_U64(state, pagemap_get(page << PAGE_SHIFT));
    CHECK_EQ_U64(lo, blo);
    CHECK_EQ_U64(hi, bhi);
}

int main(void)
{
    CHECK(pagemap_init() == 0);
    uintptr_t leaf = (uintptr_t)5 << 15; /* the leaf of pages 5 * 2^15 on */
    struct { uintptr_t from, to; uint8_t state; } runs[] = {
        { 0, 3, PM_TRACKED | PM_HEAP | 3 },           /* at the leaf's start */
        { 3, 100, PM_TRACKED | PM_HEAP | 1 },         /* same region, other rights */
        { 100, 117, PM_TRACKED | PM_STATIC | 3 },
        { 130, 1000, PM_TRACKED | PM_HEAP | 3 },      /* a gap of 13 untracked */
        { 1000, 1001, PM_TRACKED | PM_STATIC | 1 },
        { 1001, 9000, PM_TRACKED | PM_HEAP | 3 },
        { LEAF - 21, LEAF, PM_TRACKED | PM_STATIC | 3 }, /* to the leaf's end */
        { LEAF, LEAF + 50, PM_TRACKED | PM_STATIC | 3 }, /* the next leaf */
    };
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++)
        pagemap_set_range((leaf + runs[i].from) << PAGE_SHIFT,
                          (leaf + runs[i].to) << PAGE_SHIFT, runs[i].state);
    uintptr_t probes[] = { 0, 1, 2, 3, 7, 8, 9, 64, 99, 100, 108, 116, 117, 120,
                           129, 130, 131, 555, 999, 1000, 1001, 1002, 4096, 8999,
                           9000, 9001, 20000, LEAF - 22, LEAF - 21, LEAF - 1 };
    uintptr_t reaches[] = { 1, 5, 8, 64, 1024, LEAF };
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++)
        for (size_t k = 0; k < sizeof reaches / sizeof reaches[0]; k++)
            check_span(leaf + probes[i], reaches[k]);
    /* pages 100-116 are static: the span is theirs, whatever their rights */
    uintptr_t lo, hi;
    pagemap_span((leaf + 105) << PAGE_SHIFT, PM_REGION_MASK, LEAF, &lo, &hi);
    CHECK_EQ_U64(lo, (leaf + 100) << PAGE_SHIFT);
    CHECK_EQ_U64(hi, (leaf + 117) << PAGE_SHIFT);
    /* a leaf never written: all of it untracked */
    uintptr_t far = (uintptr_t)77 << 15;
    CHECK_EQ_U64(pagemap_span((far + 5) << PAGE_SHIFT, PM_REGION_MASK, 8, &lo, &hi), 0);
    CHECK_EQ_U64(lo, far << PAGE_SHIFT);
    CHECK_EQ_U64(hi, (far + LEAF) << PAGE_SHIFT);
    return CHECK_DONE();
}
