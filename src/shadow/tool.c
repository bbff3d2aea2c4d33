/*
 * shadow/tool.c - what the shadow-memory tools share: the registry by name
 * the walk over an application range unit piece by unit piece, and the
 * harvests of heat and share.
 */
#include "shadow/tool.h"

#include <string.h>

const shadow_tool *tool_by_name(const char *name)
{
    static const shadow_tool *const all[] = { &tool_heat, &tool_share,
                                              &tool_uninit };
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        if (strcmp(all[i]->name, name) == 0)
            return all[i];
    return NULL;
}

void tool_each_span(memtap_shadow_thread *t, uint64_t addr, uint64_t len,
                    tool_span_fn fn, void *ctx)
{
    const uint64_t unit = 1ull << MEMTAP_SHADOW_UNIT_SHIFT;
    while (len) {
        uint64_t room = unit - (addr & (unit - 1));
        uint64_t n = len < room ? len : room;
        uint8_t *sh = memtap_shadow_lookup(t, addr);
        if (sh)
            fn(ctx, sh, addr, n);
        addr += n;
        len -= n;
    }
}

void tool_harvest_block(memtap_shadow_thread *t, uint64_t addr,
                        uint64_t size, uint64_t grain, tool_harvest_fn fn)
{
    uint64_t first = (addr + grain - 1) & ~(grain - 1);
    if (first >= addr + size ||
        ((first ^ (addr + size - 1)) >> MEMTAP_SHADOW_UNIT_SHIFT) != 0)
        return; /* nothing starts inside, or a block across two units */
    void *sh = memtap_shadow_lookup(t, first);
    if (sh)
        fn(first, addr + size, sh);
}

static int harvest_run(void *arg, uintptr_t lo, uintptr_t hi, void *sh)
{
    (*(tool_harvest_fn *)arg)(lo, hi, sh);
    return 0;
}

void tool_harvest_all(memtap_shadow *s, tool_harvest_fn fn)
{
    memtap_shadow_each_resident(s, harvest_run, &fn);
}
