/*
 * ranges.c - the range sets of ranges.h.
 */
#include "ranges.h"

#include <stdlib.h>
#include <string.h>

static void add_active(range_set *s, uint64_t lo, uint64_t hi)
{
    uint32_t n = atomic_load_explicit(&s->nactive, memory_order_relaxed);
    if (n == RANGES_MAX || hi <= lo)
        return;
    s->active[n] = (range){ lo, hi };
    atomic_store_explicit(&s->nactive, n + 1, memory_order_release);
}

void ranges_parse(range_set *s, const char *text)
{
    while (text && *text) {
        const char *at = strchr(text, '@'), *comma = strchr(text, ',');
        int in_module = at && (!comma || at < comma);
        char *end;
        uint64_t lo = strtoull(in_module ? at + 1 : text, &end, 16);
        uint64_t hi = *end == '-' ? strtoull(end + 1, &end, 16) : 0;
        size_t len = in_module ? (size_t)(at - text) : 0;
        if (in_module && s->npending < RANGES_MAX && len < 256) {
            memcpy(s->module[s->npending], text, len);
            s->module[s->npending][len] = '\0';
            s->pending[s->npending++] = (range){ lo, hi };
        } else if (!in_module) {
            add_active(s, lo, hi);
        }
        s->given = 1;
        text = strchr(end, ',');
        text = text ? text + 1 : NULL;
    }
}

uint32_t ranges_module_loaded(range_set *s, const char *path, uint64_t bias)
{
    uint32_t before = ranges_count(s);
    for (uint32_t i = 0; i < s->npending; i++)
        if (s->module[i][0] && strcmp(s->module[i], path) == 0) {
            add_active(s, s->pending[i].lo + bias, s->pending[i].hi + bias);
            s->module[i][0] = '\0'; /* once */
        }
    return before;
}

int ranges_cover(const range_set *s, uint64_t addr, uint64_t size)
{
    uint32_t n = ranges_count(s);
    for (uint32_t i = 0; i < n; i++)
        if (addr >= s->active[i].lo && addr + size <= s->active[i].hi &&
            addr + size >= addr)
            return 1;
    return 0;
}

int ranges_meet(const range_set *s, uint64_t addr, uint64_t size)
{
    uint32_t n = ranges_count(s);
    for (uint32_t i = 0; i < n; i++)
        if (addr < s->active[i].hi && addr + size > s->active[i].lo)
            return 1;
    return 0;
}
