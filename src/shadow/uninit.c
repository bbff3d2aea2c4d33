/*
 * shadow/uninit.c - the uninit tool: heap bytes read before any write.
 * One shadow byte per application byte (1B-to-1B): 1 while a byte of a
 * malloc'd block has not been written, 0 for everything else (a block the
 * C library allocates for itself, a stdio buffer, counts as written: the
 * host says so, as it fills it in code that is not the program's).  Stores and
 * memset-like operations clear it, copies carry it along (copying
 * uninitialized bytes is no error), frees forget it.  A load, or a block
 * the program hands to write()-like calls, that covers a byte still at 1 is
 * reported once per instruction (MEMTAP_EV_UNINIT, when first seen, so the
 * block is named as it was then) and counted; the counts are written at
 * exit (MEMTAP_EV_UNINIT_TOTAL).
 *
 * With check_once (the patent's check-once flag), an instruction whose
 * read was once found initialized is not checked again: cheaper, at the
 * price of missing its later uninitialized reads.  The host hears of it
 * (tool_options.passed), and rewritten code stops logging that load.
 */
#include "shadow/tool.h"
#include "sys/hash.h"

#include "sys/rawsys.h"

#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#define SITE_BITS 14
#define SITES (1u << SITE_BITS)
#define SITE_REPORTED 1u
#define SITE_PASSED 2u
#define UNIT (1ull << MEMTAP_SHADOW_UNIT_SHIFT)

typedef struct site {
    uint64_t pc;
    uint32_t state;
    uint32_t reserved;
    uint64_t count;            /* uninitialized reads by this instruction */
} site;

static struct {
    memtap_shadow *space;
    tool_record_fn record;
    tool_passed_fn passed;
    int check_once;
    site *sites;               /* open addressing, keyed by pc */
} uninit_state;

/* The site of pc, inserted on first use; NULL when the table is full. */
static site *site_of(uint64_t pc)
{
    uint32_t i = (uint32_t)fib_hash(pc, SITE_BITS);
    for (uint32_t probes = 0; probes < SITES; probes++, i = (i + 1) & (SITES - 1)) {
        uint64_t seen = __atomic_load_n(&uninit_state.sites[i].pc, __ATOMIC_ACQUIRE);
        if (seen == pc)
            return &uninit_state.sites[i];
        if (seen == 0 &&
            (__atomic_compare_exchange_n(&uninit_state.sites[i].pc, &seen, pc, 0,
                                         __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) ||
             seen == pc))
            return &uninit_state.sites[i];
    }
    return NULL;
}

static uint64_t room(uint64_t addr) { return UNIT - (addr & (UNIT - 1)); }

static void report(uint64_t pc, uint64_t addr, uint64_t size, uint64_t first,
                   uint64_t undefined)
{
    site *s = site_of(pc);
    if (s) {
        __atomic_fetch_add(&s->count, 1, __ATOMIC_RELAXED);
        if (__atomic_fetch_or(&s->state, SITE_REPORTED, __ATOMIC_RELAXED) &
            SITE_REPORTED)
            return;
    }
    uninit_state.record(MEMTAP_EV_UNINIT, pc, first, size, addr, undefined);
}

/* Checks a read of [addr, addr+len) by pc. */
/* Reports a read of [addr, addr+len) that touches never-written bytes;
 * with partial_ok only when it reads nothing written (vector loads of
 * string functions read whole vectors past the end of their data). */
static void check(memtap_shadow_thread *t, memtap_shadow_ref *rc, uint64_t pc,
                  uint64_t addr, uint64_t len, int partial_ok)
{
    site *s = uninit_state.check_once ? site_of(pc) : NULL;
    if (s && (__atomic_load_n(&s->state, __ATOMIC_RELAXED) & SITE_PASSED))
        return;
    const struct memtap_shadow_fast *f = memtap_shadow_fast_of(uninit_state.space);
    uint64_t undefined = 0, first = 0;
    for (uint64_t off = 0; off < len;) {
        uint64_t n = len - off < room(addr + off) ? len - off : room(addr + off);
        const uint8_t *sh = memtap_shadow_ref_lookup(t, f, rc, addr + off);
        for (uint64_t k = 0; sh && k < n; k++) {
            if (sh[k] && !undefined++)
                first = addr + off + k;
        }
        off += n;
    }
    if (undefined && (!partial_ok || undefined == len))
        report(pc, addr, len, first, undefined);
    else if (s && !(__atomic_fetch_or(&s->state, SITE_PASSED,
                                      __ATOMIC_RELAXED) & SITE_PASSED) &&
             uninit_state.passed)
        uninit_state.passed(pc);
}

static void define_span(void *ctx, uint8_t *sh, uint64_t lo, uint64_t n)
{
    (void)ctx, (void)lo;
    for (uint64_t k = 0; k < n; k++) {
        if (sh[k]) { /* only write shadow that holds something */
            memset(sh + k, 0, n - k);
            return;
        }
    }
}

static void undefine_span(void *ctx, uint8_t *sh, uint64_t lo, uint64_t n)
{
    (void)ctx, (void)lo;
    memset(sh, 1, n);
}

/* Copies the state of [src, src+len) to [dst, dst+len). */
static void copy_state(memtap_shadow_thread *t, uint64_t dst, uint64_t src,
                       uint64_t len)
{
    for (uint64_t off = 0; off < len;) {
        uint64_t n = len - off;
        if (n > room(dst + off))
            n = room(dst + off);
        if (n > room(src + off))
            n = room(src + off);
        uint8_t *d = memtap_shadow_lookup(t, dst + off);
        const uint8_t *s = memtap_shadow_lookup(t, src + off);
        if (d && s) {
            uint64_t k = 0;
            while (k < n && !s[k])
                k++;
            if (k < n)
                memmove(d, s, n);
            else
                define_span(NULL, d, dst + off, n);
        }
        off += n;
    }
}

static int uninit_init(const tool_options *opt, memtap_shadow **space)
{
    uninit_state.record = opt->record;
    uninit_state.check_once = opt->check_once;
    uninit_state.passed = opt->passed;
    long p = raw_syscall6(SYS_mmap, 0, SITES * sizeof(site),
                          PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                          -1, 0);
    if (RAW_FAILED(p))
        return MEMTAP_SHADOW_E_NOMEM;
    uninit_state.sites = (site *)p;
    memtap_shadow_client c;
    memset(&c, 0, sizeof c);
    c.app_bytes = 1;
    c.shadow_bits = 8;
    int rc = memtap_shadow_create(&c, &uninit_state.space);
    *space = uninit_state.space;
    return rc;
}

static void uninit_access(memtap_shadow_thread *t, memtap_shadow_ref *rc,
                          uint64_t pc, uint64_t addr, uint32_t size, int store)
{
    if (store)
        tool_each_span(t, addr, size, define_span, NULL);
    else
        check(t, rc, pc, addr, size, size > 8);
}

static void uninit_block(memtap_shadow_thread *t, uint8_t kind, uint64_t pc,
                         uint64_t dst, uint64_t src, uint64_t len)
{
    memtap_shadow_ref rc = MEMTAP_SHADOW_REF_INIT;
    if (kind == MEMTAP_EV_COPY)
        copy_state(t, dst, src, len);
    else if (kind == MEMTAP_EV_BLOCK_STORE)
        tool_each_span(t, dst, len, define_span, NULL);
    else
        check(t, &rc, pc, dst, len, 0);
}

static void uninit_alloc(memtap_shadow_thread *t, uint64_t addr,
                         uint64_t size, int zeroed)
{
    tool_each_span(t, addr, size, zeroed ? define_span : undefine_span, NULL);
}

static void uninit_release(memtap_shadow_thread *t, uint64_t addr,
                           uint64_t size)
{
    tool_each_span(t, addr, size, define_span, NULL);
}

static void uninit_realloc(memtap_shadow_thread *t, uint64_t addr,
                           uint64_t size, uint64_t old, uint64_t old_size)
{
    if (!old) {
        uninit_alloc(t, addr, size, 0);
        return;
    }
    uint64_t keep = old_size < size ? old_size : size;
    if (addr != old) {
        copy_state(t, addr, old, keep);
        uninit_release(t, old, old_size);
    }
    if (size > keep)
        uninit_alloc(t, addr + keep, size - keep, 0);
}

static void uninit_finish(void)
{
    for (uint32_t i = 0; i < SITES; i++)
        if (uninit_state.sites[i].count)
            uninit_state.record(MEMTAP_EV_UNINIT_TOTAL, uninit_state.sites[i].pc, 0, 0, 0,
                   uninit_state.sites[i].count);
}

/* The child's heap is the parent's (its state stays); its reports are
 * its own. */
static void uninit_forked(void) { memset(uninit_state.sites, 0, SITES * sizeof(site)); }

const shadow_tool tool_uninit = {
    .name = "uninit",
    .init = uninit_init,
    .access = uninit_access,
    .block = uninit_block,
    .alloc = uninit_alloc,
    .realloc = uninit_realloc,
    .release = uninit_release,
    .forked = uninit_forked,
    .finish = uninit_finish,
};
