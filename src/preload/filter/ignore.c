/*
 * ignore.c - the --ignore ranges (ignore.h), a range set (ranges.h).
 */
#include "ignore.h"
#include "preload/core/config.h"
#include "preload/core/filters.h"

#include "memtap/trace.h"
#include "ranges.h"
#include "sys/env.h"

#include <stdlib.h>

static range_set ig;
static _Atomic uint64_t hits;


void ignore_module_loaded(const char *path, uint64_t bias)
{
    ranges_module_loaded(&ig, path, bias);
}

static int ignore_keeps(uint8_t kind, uint64_t addr, uint64_t size,
                        uint64_t addr2)
{
    if (ranges_count(&ig) == 0) /* none of their modules loaded yet */
        return 1;
    uint64_t n = size ? size : 1;
    int drop;
    switch (kind) {
    case MEMTAP_EV_LOAD:
    case MEMTAP_EV_STORE:
    case MEMTAP_EV_BLOCK_STORE:
    case MEMTAP_EV_BLOCK_FETCH:
        drop = ranges_cover(&ig, addr, n);
        break;
    case MEMTAP_EV_COPY:
        drop = ranges_cover(&ig, addr, n) && ranges_cover(&ig, addr2, n);
        break;
    default:
        return 1;
    }
    if (drop)
        atomic_fetch_add_explicit(&hits, 1, memory_order_relaxed);
    return !drop;
}

void ignore_init(void)
{
    ranges_parse(&ig, config()->ignore);
    if (ig.given)
        filters_add(ignore_keeps);
}

void ignore_end_stats(fmt_buf *b)
{
    if (!ig.given)
        return;
    fmt_str(b, "ignored=");
    fmt_u64(b, atomic_load(&hits));
    fmt_char(b, '\n');
}
