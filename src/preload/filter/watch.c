/*
 * watch.c - `memtap run --watch` (watch.h).  Watched variables and ranges
 * are a range set (ranges.h); the live blocks of watched allocation sites
 * are a table, added to and removed from under a spin lock, scanned
 * without one (a slot is published by the release store of its start).
 */
#include "watch.h"
#include "preload/core/config.h"
#include "preload/core/filters.h"

#include "preload/memmap/traced_set.h"
#include "preload/memmap/pagemap.h"
#include "ranges.h"
#include "preload/record/tracer.h"
#include "sys/env.h"
#include "sys/spin.h"

#include <elf.h>
#include <stdlib.h>
#include <sys/mman.h>

#define BLOCKS_MAX 4096

static struct {
    int on;
    range_set objects, sites;
    int prot[RANGES_MAX];             /* of the objects' memory */
    struct {
        _Atomic uint64_t lo;          /* 0: a free slot */
        uint64_t hi;
    } blocks[BLOCKS_MAX];
    _Atomic uint32_t nslots;          /* slots ever used */
    atomic_int lock;
    _Atomic uint64_t missed;          /* watched blocks the table had no
                                         room for */
} watch_state;

static int watch_keeps(uint8_t kind, uint64_t addr, uint64_t size, uint64_t addr2);

void watch_init(void)
{
    ranges_parse(&watch_state.objects, config()->watch);
    ranges_parse(&watch_state.sites, config()->watch_sites);
    watch_state.on = watch_state.objects.given || watch_state.sites.given;
    if (watch_state.on)
        filters_add(watch_keeps);
    for (int i = 0; i < RANGES_MAX; i++)
        watch_state.prot[i] = PROT_READ | PROT_WRITE;
}

int watch_active(void) { return watch_state.on; }

static void track(uint32_t from)
{
    uint32_t n = ranges_count(&watch_state.objects);
    for (uint32_t i = from; i < n; i++)
        traced_add(watch_state.objects.active[i].lo, watch_state.objects.active[i].hi,
                    watch_state.prot[i], PM_STATIC);
}

void watch_module_loaded(const char *path, uint64_t bias,
                         const memtap_segment *segs, uint16_t nsegs)
{
    if (!watch_state.on)
        return;
    ranges_module_loaded(&watch_state.sites, path, bias);
    uint32_t from = ranges_module_loaded(&watch_state.objects, path, bias);
    uint32_t n = ranges_count(&watch_state.objects);
    for (uint32_t i = from; i < n; i++)
        for (uint16_t k = 0; k < nsegs; k++) {
            uint64_t lo = bias + segs[k].vaddr;
            if (watch_state.objects.active[i].lo >= lo &&
                watch_state.objects.active[i].lo < lo + segs[k].memsz)
                watch_state.prot[i] = ((segs[k].prot & PF_R) ? PROT_READ : 0) |
                            ((segs[k].prot & PF_W) ? PROT_WRITE : 0);
        }
    if (traced_kept())
        track(from);
}

void watch_track_all(void) { track(0); }

static int block_meets(uint64_t addr, uint64_t size)
{
    uint32_t n = atomic_load_explicit(&watch_state.nslots, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++) {
        uint64_t lo = atomic_load_explicit(&watch_state.blocks[i].lo,
                                           memory_order_acquire);
        if (lo && addr < watch_state.blocks[i].hi && addr + size > lo)
            return 1;
    }
    return 0;
}

void watch_block_released(uint64_t p)
{
    if (!watch_state.on || !p || !block_meets(p, 1))
        return;
    /* what rewritten code logged before is judged while the block is
     * still watched */
    tracer_sync();
    spin_acquire(&watch_state.lock);
    uint32_t n = atomic_load_explicit(&watch_state.nslots, memory_order_relaxed);
    for (uint32_t i = 0; i < n; i++)
        if (atomic_load_explicit(&watch_state.blocks[i].lo, memory_order_relaxed) == p)
            atomic_store_explicit(&watch_state.blocks[i].lo, 0, memory_order_release);
    spin_release(&watch_state.lock);
}

int watch_block_made(uint64_t p, uint64_t size, uint64_t site, uint64_t old)
{
    if (old)
        watch_block_released(old);
    if (!watch_state.on || !p || !ranges_meet(&watch_state.sites, site, 1))
        return 0;
    spin_acquire(&watch_state.lock);
    uint32_t n = atomic_load_explicit(&watch_state.nslots, memory_order_relaxed), i;
    for (i = 0; i < n && atomic_load_explicit(&watch_state.blocks[i].lo,
                                              memory_order_relaxed); i++)
        ;
    int room = i < BLOCKS_MAX;
    if (room) {
        watch_state.blocks[i].hi = p + (size ? size : 1);
        atomic_store_explicit(&watch_state.blocks[i].lo, p, memory_order_release);
        if (i == n)
            atomic_store_explicit(&watch_state.nslots, n + 1, memory_order_release);
    }
    spin_release(&watch_state.lock);
    if (!room) {
        atomic_fetch_add(&watch_state.missed, 1);
        return 0;
    }
    traced_add(p, p + (size ? size : 1), PROT_READ | PROT_WRITE, PM_HEAP);
    return 1;
}

/* The recorder's filter (filters.h) while --watch is given: keeps an
 * access that meets a watched object, a copy either of whose sides does,
 * and everything that is not an access. */
static int watch_keeps(uint8_t kind, uint64_t addr, uint64_t size, uint64_t addr2)
{
    uint64_t n = size ? size : 1;
    switch (kind) {
    case MEMTAP_EV_COPY:
        if (ranges_meet(&watch_state.objects, addr2, n) || block_meets(addr2, n))
            return 1;
        __attribute__((fallthrough)); /* or its destination */
    case MEMTAP_EV_LOAD:
    case MEMTAP_EV_STORE:
    case MEMTAP_EV_BLOCK_STORE:
    case MEMTAP_EV_BLOCK_FETCH:
        return ranges_meet(&watch_state.objects, addr, n) || block_meets(addr, n);
    default:
        return 1;
    }
}

void watch_end_stats(fmt_buf *b)
{
    uint64_t missed = atomic_load(&watch_state.missed);
    if (!watch_state.on || !missed)
        return;
    fmt_str(b, "watch_blocks_missed=");
    fmt_u64(b, missed);
    fmt_char(b, '\n');
}
