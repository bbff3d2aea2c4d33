/*
 * shadow/heat.c - the heat tool: one 64-bit access counter per 8-byte word
 * of application memory (a byte of shadow per byte), reported in chunks.
 * An access adds one for each chunk it touches, at the first word it
 * touches there, so a chunk's words sum to the accesses that touched the
 * chunk and each access is credited to the object it touched (two objects
 * sharing a chunk are told apart).  A block operation counts alike for
 * each of its ranges.  Counters are written out as MEMTAP_EV_HEAT records
 * (the word's address, the chunk size, the count), and zeroed, when their
 * memory is released (a heap block freed, a mapping removed) and at exit,
 * so a word is named after what held it then.
 */
#include "shadow/tool.h"

#include <string.h>

#define WORD 8u

static struct {
    memtap_shadow *space;
    uint64_t chunk;
    tool_record_fn record;
} heat_state;

static void count(uint64_t *c)
{
    __atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}

static void count_range(memtap_shadow_thread *t, memtap_shadow_ref *rc,
                        uint64_t addr, uint64_t len)
{
    const struct memtap_shadow_fast *f = memtap_shadow_fast_of(heat_state.space);
    uint64_t last = (addr + (len ? len : 1) - 1) & ~(heat_state.chunk - 1);
    for (uint64_t c = addr & ~(heat_state.chunk - 1); c <= last; c += heat_state.chunk) {
        uint64_t word = (c > addr ? c : addr) & ~(uint64_t)(WORD - 1);
        uint64_t *ctr = memtap_shadow_ref_lookup(t, f, rc, word);
        if (ctr)
            count(ctr);
        if (c + heat_state.chunk < c)
            break;
    }
}

/* Writes and zeroes the counters of the words that start in [lo, hi);
 * shadow is the counter of lo's word. */
static void harvest(uint64_t lo, uint64_t hi, void *sh)
{
    uint64_t *shadow = sh;
    uint64_t first = (lo + WORD - 1) & ~(uint64_t)(WORD - 1);
    shadow += (first - (lo & ~(uint64_t)(WORD - 1))) / WORD;
    for (uint64_t w = first; w < hi && w >= first; w += WORD, shadow++) {
        if (*shadow == 0)
            continue;
        uint64_t n = __atomic_exchange_n(shadow, 0, __ATOMIC_RELAXED);
        if (n)
            heat_state.record(MEMTAP_EV_HEAT, 0, w, heat_state.chunk, 0, n);
    }
}

static void on_remove(void *user, uintptr_t lo, uintptr_t hi, void *shadow)
{
    (void)user;
    harvest(lo, hi, shadow);
}

static int heat_init(const tool_options *opt, memtap_shadow **space)
{
    heat_state.chunk = opt->chunk;
    heat_state.record = opt->record;
    memtap_shadow_client c;
    memset(&c, 0, sizeof c);
    c.app_bytes = WORD;
    c.shadow_bits = 64;
    c.remove = on_remove;
    int rc = memtap_shadow_create(&c, &heat_state.space);
    *space = heat_state.space;
    return rc;
}

static void heat_access(memtap_shadow_thread *t, memtap_shadow_ref *rc,
                        uint64_t pc, uint64_t addr, uint32_t size, int store)
{
    (void)pc;
    (void)store;
    count_range(t, rc, addr, size);
}

static void heat_block(memtap_shadow_thread *t, uint8_t kind, uint64_t pc,
                       uint64_t dst, uint64_t src, uint64_t len)
{
    (void)pc;
    memtap_shadow_ref rc = MEMTAP_SHADOW_REF_INIT;
    count_range(t, &rc, dst, len);
    if (kind == MEMTAP_EV_COPY)
        count_range(t, &rc, src, len);
}

static void heat_release(memtap_shadow_thread *t, uint64_t addr,
                         uint64_t size)
{
    tool_harvest_block(t, addr, size, WORD, harvest);
}

static void heat_realloc(memtap_shadow_thread *t, uint64_t addr,
                         uint64_t size, uint64_t old, uint64_t old_size)
{
    (void)size;
    if (old && addr != old)
        heat_release(t, old, old_size);
}

static void heat_finish(void) { tool_harvest_all(heat_state.space, harvest); }

static void heat_forked(void) { memtap_shadow_clear(heat_state.space); }

const shadow_tool tool_heat = {
    .name = "heat",
    .init = heat_init,
    .access = heat_access,
    .block = heat_block,
    .realloc = heat_realloc,
    .release = heat_release,
    .forked = heat_forked,
    .finish = heat_finish,
};
