/*
 * pagemap.c - the page state table: 2^35 pages of a 47-bit address space
 * as 2^20 leaves of 2^15 pages (32 KiB of state each, 128 MiB of address
 * space).  The root (8 MiB, reserved without backing) fills in as leaves
 * are installed with compare-and-swap; a bit per root slot says which
 * have a leaf, so that a walk over the tracked pages reads the few leaves
 * there are, not the whole root (which took 3 ms: half of a short
 * program's run under the fault engine, and again at every
 * memtap_start/memtap_stop).
 */
#include "pagemap.h"
#include "sys/rawsys.h"
#include "sys/page.h"


#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#define LEAF_BITS 15
#define ROOT_BITS 20
#define LEAF_PAGES (1ul << LEAF_BITS)
#define ROOT_SLOTS (1ul << ROOT_BITS)

static _Atomic(uint8_t *) *root;
static _Atomic uint64_t *installed; /* ROOT_SLOTS bits */
static _Atomic uint64_t generation; /* bumped after states change */

int pagemap_init(void)
{
    if (root)
        return 0;
    installed = raw_map(ROOT_SLOTS / 8);
    if (!installed)
        return -1;
    root = raw_map(ROOT_SLOTS * sizeof *root);
    return root ? 0 : -1;
}

static uint8_t *leaf(uintptr_t page, int create)
{
    uintptr_t slot = page >> LEAF_BITS;
    if (!root || slot >= ROOT_SLOTS)
        return NULL;
    uint8_t *l = atomic_load(&root[slot]);
    if (l || !create)
        return l;
    uint8_t *fresh = raw_map(LEAF_PAGES);
    if (!fresh)
        return NULL;
    uint8_t *expected = NULL;
    if (!atomic_compare_exchange_strong(&root[slot], &expected, fresh)) {
        raw_unmap(fresh, LEAF_PAGES);
        return expected;
    }
    atomic_fetch_or(&installed[slot / 64], 1ull << (slot % 64));
    return fresh;
}

uint8_t pagemap_get(uintptr_t addr)
{
    uintptr_t page = addr >> PAGE_SHIFT;
    uint8_t *l = leaf(page, 0);
    return l ? l[page & (LEAF_PAGES - 1)] : 0;
}

/* Whether the eight states at l agree with `want` in the bits of mask
 * (each of the eight bytes masked). */
static int eight_agree(const uint8_t *l, uint64_t mask8, uint64_t want8)
{
    uint64_t w;
    memcpy(&w, l, 8);
    return (w & mask8) == want8;
}

uint8_t pagemap_span(uintptr_t addr, uint8_t mask, uintptr_t reach,
                     uintptr_t *lo, uintptr_t *hi)
{
    uintptr_t page = addr >> PAGE_SHIFT, at = page & (LEAF_PAGES - 1);
    uintptr_t base = page - at;
    const uint8_t *l = leaf(page, 0);
    if (!l) { /* a leaf never written: all of it untracked */
        *lo = base << PAGE_SHIFT;
        *hi = (base + LEAF_PAGES) << PAGE_SHIFT;
        return 0;
    }
    uint8_t state = l[at], want = state & mask;
    uint64_t mask8 = 0x0101010101010101ull * mask;
    uint64_t want8 = 0x0101010101010101ull * want;
    uintptr_t first = at, last = at + 1;
    uintptr_t stop = at > reach ? at - reach : 0;
    while (first > stop && (l[first - 1] & mask) == want) {
        first--;
        while (first >= stop + 8 && first % 8 == 0 && eight_agree(l + first - 8, mask8, want8))
            first -= 8;
    }
    stop = LEAF_PAGES - last > reach ? last + reach : LEAF_PAGES;
    while (last < stop && (l[last] & mask) == want) {
        last++;
        while (last + 8 <= stop && last % 8 == 0 && eight_agree(l + last, mask8, want8))
            last += 8;
    }
    *lo = (base + first) << PAGE_SHIFT;
    *hi = (base + last) << PAGE_SHIFT;
    return state;
}

void pagemap_set_range(uintptr_t start, uintptr_t end, uint8_t state)
{
    int changed = 0;
    for (uintptr_t page = start >> PAGE_SHIFT;
         page < (end + PAGE - 1) >> PAGE_SHIFT; page++) {
        uint8_t *l = leaf(page, state != 0);
        uint8_t *at = l ? &l[page & (LEAF_PAGES - 1)] : NULL;
        if (at && *at != state) {
            *at = state;
            changed = 1;
        }
    }
    if (changed) /* after the states: see pagemap_generation */
        atomic_fetch_add_explicit(&generation, 1, memory_order_release);
}

uint64_t pagemap_generation(void)
{
    return atomic_load_explicit(&generation, memory_order_acquire);
}

void pagemap_for_each_tracked(void (*fn)(uintptr_t, uintptr_t, uint8_t,
                                         void *),
                              void *arg)
{
    uintptr_t run_start = 0, run_end = 0;
    uint8_t run_state = 0;
    for (uintptr_t word = 0; root && word < ROOT_SLOTS / 64; word++) {
        for (uint64_t bits = atomic_load(&installed[word]); bits;
             bits &= bits - 1) {
            uintptr_t slot = word * 64 + (uintptr_t)__builtin_ctzll(bits);
            const uint8_t *l = atomic_load(&root[slot]);
            for (uintptr_t i = 0; i < LEAF_PAGES; i++) {
                uint64_t eight;
                if (!run_state && i % 8 == 0 &&
                    (memcpy(&eight, l + i, 8), eight == 0)) {
                    i += 7; /* eight untracked pages, no run open */
                    continue;
                }
                uint8_t s = l[i];
                uintptr_t addr = ((slot << LEAF_BITS) | i) << PAGE_SHIFT;
                if (s & PM_TRACKED && s == run_state && addr == run_end) {
                    run_end += PAGE;
                    continue;
                }
                if (run_state)
                    fn(run_start, run_end, run_state, arg);
                run_state = (s & PM_TRACKED) ? s : 0;
                run_start = addr;
                run_end = addr + PAGE;
            }
        }
    }
    if (run_state)
        fn(run_start, run_end, run_state, arg);
}
