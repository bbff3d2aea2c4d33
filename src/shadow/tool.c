/*
 * shadow/tool.c - what the shadow-memory tools share: the registry by name
 * and the walk over an application range unit piece by unit piece.
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
