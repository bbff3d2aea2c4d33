/*
 * ignore.c - the --ignore ranges (ignore.h).  The table is filled before
 * the program runs (absolute ranges) or when the module a range belongs to
 * is first seen; readers take no lock: a range becomes visible with the
 * release store of the count.
 */
#include "preload/ignore.h"
#include "sys/env.h"

#include "memtap/trace.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define IGNORE_MAX 32

typedef struct range {
    uint64_t lo, hi;
} range;

static struct {
    range active[IGNORE_MAX];
    _Atomic uint32_t nactive;
    range pending[IGNORE_MAX]; /* link-time, waiting for their module */
    char module[IGNORE_MAX][256];
    uint32_t npending;
    _Atomic uint64_t hits;
    int given;
} ig;

static void add_active(uint64_t lo, uint64_t hi)
{
    uint32_t n = atomic_load_explicit(&ig.nactive, memory_order_relaxed);
    if (n == IGNORE_MAX || hi <= lo)
        return;
    ig.active[n] = (range){ lo, hi };
    atomic_store_explicit(&ig.nactive, n + 1, memory_order_release);
}

void ignore_init(void)
{
    const char *s = getenv(ENV_IGNORE);
    while (s && *s) {
        const char *at = strchr(s, '@'), *comma = strchr(s, ',');
        int in_module = at && (!comma || at < comma);
        char *end;
        uint64_t lo = strtoull(in_module ? at + 1 : s, &end, 16);
        uint64_t hi = *end == '-' ? strtoull(end + 1, &end, 16) : 0;
        size_t len = in_module ? (size_t)(at - s) : 0;
        if (in_module && ig.npending < IGNORE_MAX && len < 256) {
            memcpy(ig.module[ig.npending], s, len);
            ig.module[ig.npending][len] = '\0';
            ig.pending[ig.npending++] = (range){ lo, hi };
        } else if (!in_module) {
            add_active(lo, hi);
        }
        ig.given = 1;
        s = strchr(end, ',');
        s = s ? s + 1 : NULL;
    }
}

void ignore_module_loaded(const char *path, uint64_t bias)
{
    for (uint32_t i = 0; i < ig.npending; i++)
        if (ig.module[i][0] && strcmp(ig.module[i], path) == 0) {
            add_active(ig.pending[i].lo + bias, ig.pending[i].hi + bias);
            ig.module[i][0] = '\0'; /* once */
        }
}

int ignore_any(void)
{
    return atomic_load_explicit(&ig.nactive, memory_order_relaxed) != 0;
}

static int covered(uint64_t addr, uint64_t size)
{
    uint32_t n = atomic_load_explicit(&ig.nactive, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++)
        if (addr >= ig.active[i].lo && addr + size <= ig.active[i].hi &&
            addr + size >= addr)
            return 1;
    return 0;
}

int ignore_drops(uint8_t kind, uint64_t addr, uint64_t size, uint64_t addr2)
{
    int drop;
    switch (kind) {
    case MEMTAP_EV_LOAD:
    case MEMTAP_EV_STORE:
    case MEMTAP_EV_BLOCK_STORE:
    case MEMTAP_EV_BLOCK_FETCH:
        drop = covered(addr, size ? size : 1);
        break;
    case MEMTAP_EV_COPY:
        drop = covered(addr, size ? size : 1) && covered(addr2, size ? size : 1);
        break;
    default:
        return 0;
    }
    if (drop)
        atomic_fetch_add_explicit(&ig.hits, 1, memory_order_relaxed);
    return drop;
}

void ignore_end_stats(fmt_buf *b)
{
    if (!ig.given)
        return;
    fmt_str(b, "ignored=");
    fmt_u64(b, atomic_load(&ig.hits));
    fmt_char(b, '\n');
}
