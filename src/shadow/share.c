/*
 * shadow/share.c - the share tool (Umbra's SDRD): for every 4-byte word,
 * the set of threads that accessed it and the set that wrote it, one bit
 * per thread (4B-to-8B shadow).  As in the paper, a thread tests its bit
 * before setting it, so a word it already touched costs no shared write.
 * Threads past the 32nd share bits (thread index modulo 32).
 *
 * When memory is released and at exit, each cache line whose words were
 * touched by two or more threads is written out word by word as
 * MEMTAP_EV_SHARE records; the memtap command tells true sharing (one word,
 * several threads) from false sharing (several writers, different words).
 */
#include "shadow/tool.h"

#include <string.h>

#define WORD 4u
#define LINE 64u

typedef struct word_meta {
    uint32_t accessed;
    uint32_t written;
} word_meta;

static struct {
    memtap_shadow *space;
    tool_record_fn record;
} sh;

static uint32_t bit_of(const memtap_shadow_thread *t)
{
    return (uint32_t)(uintptr_t)t->user;
}

static void mark(word_meta *w, uint32_t bit, int store)
{
    if (!(w->accessed & bit))
        __atomic_fetch_or(&w->accessed, bit, __ATOMIC_RELAXED);
    if (store && !(w->written & bit))
        __atomic_fetch_or(&w->written, bit, __ATOMIC_RELAXED);
}

static void mark_range(memtap_shadow_thread *t, memtap_shadow_ref *rc,
                       uint64_t addr, uint64_t len, int store)
{
    const struct memtap_shadow_fast *f = memtap_shadow_fast_of(sh.space);
    uint32_t bit = bit_of(t);
    uint64_t last = (addr + (len ? len : 1) - 1) & ~(uint64_t)(WORD - 1);
    for (uint64_t a = addr & ~(uint64_t)(WORD - 1); a <= last; a += WORD) {
        word_meta *w = memtap_shadow_ref_lookup(t, f, rc, a);
        if (w)
            mark(w, bit, store);
        if (a + WORD < a)
            break;
    }
}

/* Writes the lines of [lo, hi) that two or more threads touched, then
 * forgets the range; shadow is the metadata of lo's word. */
static void harvest(uint64_t lo, uint64_t hi, void *metadata)
{
    word_meta *shadow = metadata;
    uint64_t first = (lo + WORD - 1) & ~(uint64_t)(WORD - 1);
    word_meta *w = shadow + (first - (lo & ~(uint64_t)(WORD - 1))) / WORD;
    for (uint64_t a = first; a < hi;) {
        uint64_t line_end = (a | (LINE - 1)) + 1;
        uint64_t end = line_end < hi ? line_end : hi;
        size_t n = (size_t)((end - a + WORD - 1) / WORD);
        uint32_t threads = 0;
        for (size_t k = 0; k < n; k++)
            threads |= w[k].accessed;
        if (threads & (threads - 1)) {
            for (size_t k = 0; k < n; k++)
                if (w[k].accessed)
                    sh.record(MEMTAP_EV_SHARE, 0, a + k * WORD, WORD, 0,
                            w[k].accessed | (uint64_t)w[k].written << 32);
        }
        if (threads)
            memset(w, 0, n * sizeof *w);
        w += n;
        a = end;
    }
}

static void on_remove(void *user, uintptr_t lo, uintptr_t hi, void *shadow)
{
    (void)user;
    harvest(lo, hi, shadow);
}

static void on_thread(void *user, memtap_shadow_thread *t)
{
    (void)user;
    t->user = (void *)(uintptr_t)(1u << (t->index % 32));
    sh.record(MEMTAP_EV_SHADOW_THREAD, 0, 0, 0, 0, t->index);
}

static int share_init(const tool_options *opt, memtap_shadow **space)
{
    sh.record = opt->record;
    memtap_shadow_client c;
    memset(&c, 0, sizeof c);
    c.app_bytes = WORD;
    c.shadow_bits = 64;
    c.remove = on_remove;
    c.thread_begin = on_thread;
    int rc = memtap_shadow_create(&c, &sh.space);
    *space = sh.space;
    return rc;
}

static void share_access(memtap_shadow_thread *t, memtap_shadow_ref *rc,
                         uint64_t pc, uint64_t addr, uint32_t size, int store)
{
    (void)pc;
    mark_range(t, rc, addr, size, store);
}

static void share_block(memtap_shadow_thread *t, uint8_t kind, uint64_t pc,
                        uint64_t dst, uint64_t src, uint64_t len)
{
    (void)pc;
    memtap_shadow_ref rc = MEMTAP_SHADOW_REF_INIT;
    if (kind == MEMTAP_EV_COPY)
        mark_range(t, &rc, src, len, 0);
    mark_range(t, &rc, dst, len, kind != MEMTAP_EV_BLOCK_FETCH);
}

static void share_release(memtap_shadow_thread *t, uint64_t addr,
                          uint64_t size)
{
    tool_harvest_block(t, addr, size, WORD, harvest);
}

static void share_realloc(memtap_shadow_thread *t, uint64_t addr,
                          uint64_t size, uint64_t old, uint64_t old_size)
{
    (void)size;
    if (old && addr != old)
        share_release(t, old, old_size);
}

static void share_finish(void) { tool_harvest_all(sh.space, harvest); }

static void share_forked(void) { memtap_shadow_clear(sh.space); }

const shadow_tool tool_share = {
    .name = "share",
    .init = share_init,
    .access = share_access,
    .block = share_block,
    .realloc = share_realloc,
    .release = share_release,
    .forked = share_forked,
    .finish = share_finish,
};
