/*
 * shadow/umbra.c - the shadow-memory mapping of memtap/shadow.h: address
 * space units, the global mapping table, shadow placement and relocation,
 * and the thread-private caches (O1 private table, O2 hashtable, O3 last
 * unit) behind every lookup.
 *
 * All memory comes from raw mmap calls (this code runs inside traced
 * processes, in signal handlers too).  Writers of the global table take a
 * spin lock that records its owner: a signal handler that needs a new unit
 * while its own thread holds the lock gets NULL instead of a deadlock.
 *
 * One file: the units, the table and the three caches are one data
 * structure whose invariants (the lock's owner, the units' order) span
 * all of it.
 */
#define _GNU_SOURCE
#include "memtap/shadow.h"
#include "sys/page.h"
#include "sys/hash.h"

#include "sys/rawsys.h"

#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#define UNIT_SIZE (1ull << MEMTAP_SHADOW_UNIT_SHIFT)
#define UNIT_MASK (UNIT_SIZE - 1)
#define HASH_SLOTS 64u
#define EMPTY_BASE ((uintptr_t)1)        /* never a unit-aligned address */
#define PROBE_START 0x200000000000ull    /* 32 TiB: far from programs */
#define PROBE_END 0x7f0000000000ull      /* below the mmap area */

typedef struct unit_entry {
    uintptr_t base;     /* unit-aligned application address */
    intptr_t offset;    /* shadow = ((addr >> shr) << shl) + offset */
} unit_entry;

typedef struct thread_state {
    memtap_shadow_thread pub;
    memtap_shadow *space;
    struct thread_state *next;          /* pool, append-only */
    atomic_int in_use;
    uint64_t gen;                       /* generation the caches hold */
    unit_entry last;                    /* O3 */
    unit_entry hash[HASH_SLOTS];        /* O2 */
    uint32_t nprivate;                  /* O1: copies of global entries */
    unit_entry priv[MEMTAP_SHADOW_MAX_UNITS];
    uint64_t ref_fills, last_hits, hash_hits, private_hits, global_walks;
} thread_state;

struct memtap_shadow {
    struct memtap_shadow_fast fast;     /* shr, shl, gen: read inline */
    memtap_shadow_client client;
    uint64_t unit_shadow;               /* bytes of shadow per unit */
    uint32_t bit_shift;                 /* log2 app bytes per shadow unit */
    uint32_t sub_bits;                  /* shadow bits when < 8, else 0 */
    atomic_int lock_owner;              /* tid of the writer, 0 = free */
    _Atomic uint32_t nunits;
    _Atomic uint32_t nthreads;
    _Atomic(thread_state *) threads;
    uint64_t probe;                     /* where the next shadow search starts */
    uint64_t units_registered, relocations;
    unit_entry units[MEMTAP_SHADOW_MAX_UNITS];      /* the global table */
    uintptr_t shadow_at[MEMTAP_SHADOW_MAX_UNITS];   /* shadow start per unit */
};

/* ---- memory straight from the kernel ---- */

static void *map_anon(uintptr_t hint, uint64_t size, int flags)
{
    long r = raw_syscall6(SYS_mmap, (long)hint, (long)size,
                          PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);
    return RAW_FAILED(r) ? NULL : (void *)r;
}

static void unmap(void *p, uint64_t size)
{
    raw_syscall3(SYS_munmap, p, size, 0);
}

static int is_pow2(uint32_t v) { return v && !(v & (v - 1)); }

static uint32_t log2u(uint64_t v)
{
    return (uint32_t)(63 - __builtin_clzll(v));
}

static uint32_t gettid_raw(void)
{
    return (uint32_t)raw_syscall3(SYS_gettid, 0, 0, 0);
}

/* ---- the writers' lock ---- */

/* Returns 0 when taken; -1 when the caller's own thread holds it (a
 * signal handler interrupted a writer: it must not wait). */
static int lock(memtap_shadow *s)
{
    int tid = (int)gettid_raw();
    for (;;) {
        int free_owner = 0;
        if (atomic_compare_exchange_weak(&s->lock_owner, &free_owner, tid))
            return 0;
        if (free_owner == tid)
            return -1;
        raw_syscall3(SYS_sched_yield, 0, 0, 0);
    }
}

static void unlock(memtap_shadow *s) { atomic_store(&s->lock_owner, 0); }

/* ---- the global table ---- */

static uintptr_t unit_of(uintptr_t addr) { return addr & ~(uintptr_t)UNIT_MASK; }

static uintptr_t scaled(const memtap_shadow *s, uintptr_t addr)
{
    return (addr >> s->fast.shr) << s->fast.shl;
}

static int find_global(memtap_shadow *s, uintptr_t base)
{
    uint32_t n = atomic_load_explicit(&s->nunits, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++)
        if (s->units[i].base == base)
            return (int)i;
    return -1;
}

static int overlaps(uintptr_t a, uint64_t alen, uintptr_t b, uint64_t blen)
{
    return a < b + blen && b < a + alen;
}

/* Whether [at, at+size) may hold shadow: in no application unit, clear of
 * the range the caller is making room for. */
static int usable(const memtap_shadow *s, uintptr_t at, uint64_t size,
                  uintptr_t avoid, uint64_t avoid_len)
{
    if (avoid_len && overlaps(at, size, avoid, avoid_len))
        return 0;
    uint32_t n = atomic_load(&s->nunits);
    for (uint32_t i = 0; i < n; i++)
        if (overlaps(at, size, s->units[i].base, UNIT_SIZE))
            return 0;
    return 1;
}

static void *try_place(memtap_shadow *s, uintptr_t at, uintptr_t avoid,
                       uint64_t avoid_len)
{
    uint64_t size = s->unit_shadow;
    if (at < PROBE_START || at + size > PROBE_END ||
        !usable(s, at, size, avoid, avoid_len))
        return NULL;
    void *p = map_anon(at, size, MAP_NORESERVE | MAP_FIXED_NOREPLACE);
    if (p && (uintptr_t)p != at) { /* a kernel that took it as a hint */
        unmap(p, size);
        p = NULL;
    }
    return p;
}

/* Reserves shadow for the unit at base: next to a neighbour unit's shadow
 * when it has one (so that straddling accesses find contiguous metadata),
 * else in free space, leaving room around it for neighbours to come. */
static void *reserve_shadow(memtap_shadow *s, uintptr_t base,
                            uintptr_t avoid, uint64_t avoid_len)
{
    uint64_t size = s->unit_shadow;
    int below = base >= UNIT_SIZE ? find_global(s, base - UNIT_SIZE) : -1;
    int above = find_global(s, base + UNIT_SIZE);
    void *p = NULL;
    if (below >= 0)
        p = try_place(s, s->shadow_at[below] + size, avoid, avoid_len);
    if (!p && above >= 0)
        p = try_place(s, s->shadow_at[above] - size, avoid, avoid_len);
    for (uintptr_t at = s->probe; !p && at + 8 * size <= PROBE_END;
         at += 8 * size) {
        p = try_place(s, at + 4 * size, avoid, avoid_len);
        if (p)
            s->probe = at + 8 * size;
    }
    return p;
}

/* Registers the unit at base (the caller holds the lock).  Returns its
 * index or a negative status. */
static int add_unit(memtap_shadow *s, uintptr_t base)
{
    int i = find_global(s, base);
    if (i >= 0)
        return i;
    uint32_t n = atomic_load(&s->nunits);
    if (n == MEMTAP_SHADOW_MAX_UNITS)
        return MEMTAP_SHADOW_E_FULL;
    void *sh = reserve_shadow(s, base, 0, 0);
    if (!sh)
        return MEMTAP_SHADOW_E_NOMEM;
    s->shadow_at[n] = (uintptr_t)sh;
    s->units[n].base = base;
    s->units[n].offset = (intptr_t)((uintptr_t)sh - scaled(s, base));
    atomic_store_explicit(&s->nunits, n + 1, memory_order_release);
    s->units_registered++;
    return (int)n;
}

static void *shadow_in(const memtap_shadow *s, int unit, uintptr_t addr)
{
    return (void *)(scaled(s, addr) + (uintptr_t)s->units[unit].offset);
}

/* Calls fn(lo, hi, unit index) for each piece of [addr, addr+len) that
 * lies in one registered unit. */
static void each_piece(memtap_shadow *s, uintptr_t addr, size_t len,
                       void (*fn)(memtap_shadow *, uintptr_t, uintptr_t, int))
{
    uintptr_t end = addr + len;
    for (uintptr_t lo = addr; lo < end && lo >= addr;) {
        uintptr_t unit_end = unit_of(lo) + UNIT_SIZE;
        uintptr_t hi = end < unit_end || unit_end == 0 ? end : unit_end;
        int i = find_global(s, unit_of(lo));
        if (i >= 0)
            fn(s, lo, hi, i);
        lo = hi;
    }
}

/* ---- creation ---- */

int memtap_shadow_create(const memtap_shadow_client *client,
                         memtap_shadow **out)
{
    *out = NULL;
    if (!is_pow2(client->app_bytes) || !is_pow2(client->shadow_bits) ||
        client->app_bytes > 4096 || client->shadow_bits > 512)
        return MEMTAP_SHADOW_E_INVALID;
    memtap_shadow *s = map_anon(0, sizeof *s, 0);
    if (!s)
        return MEMTAP_SHADOW_E_NOMEM;
    s->client = *client;
    if (!s->client.caches)
        s->client.caches = MEMTAP_SHADOW_ALL_CACHES;
    uint32_t app_log = log2u(client->app_bytes);
    uint32_t bits_log = log2u(client->shadow_bits);
    s->bit_shift = app_log;
    if (bits_log >= 3) {
        s->fast.shr = app_log;
        s->fast.shl = bits_log - 3;
    } else {
        s->fast.shr = app_log + 3 - bits_log;
        s->fast.shl = 0;
        s->sub_bits = client->shadow_bits;
    }
    s->unit_shadow = (UNIT_SIZE >> s->fast.shr) << s->fast.shl;
    if (s->unit_shadow < PAGE)
        s->unit_shadow = PAGE;
    s->probe = PROBE_START;
    *out = s;
    return MEMTAP_SHADOW_OK;
}

void memtap_shadow_destroy(memtap_shadow *s)
{
    if (!s)
        return;
    uint32_t n = atomic_load(&s->nunits);
    for (uint32_t i = 0; i < n; i++)
        unmap((void *)s->shadow_at[i], s->unit_shadow);
    for (thread_state *t = atomic_load(&s->threads); t;) {
        thread_state *next = t->next;
        unmap(t, sizeof *t);
        t = next;
    }
    unmap(s, sizeof *s);
}

const struct memtap_shadow_fast *memtap_shadow_fast_of(const memtap_shadow *s)
{
    return &s->fast;
}

/* ---- threads ---- */

static void reset_caches(thread_state *t, uint64_t gen)
{
    t->gen = gen;
    t->last.base = EMPTY_BASE;
    for (uint32_t i = 0; i < HASH_SLOTS; i++)
        t->hash[i].base = EMPTY_BASE;
    t->nprivate = 0;
}

memtap_shadow_thread *memtap_shadow_thread_begin(memtap_shadow *s)
{
    thread_state *t = NULL;
    for (thread_state *c = atomic_load(&s->threads); c && !t; c = c->next) {
        int idle = 0;
        if (atomic_compare_exchange_strong(&c->in_use, &idle, 1))
            t = c;
    }
    if (!t) {
        t = map_anon(0, sizeof *t, 0);
        if (!t)
            return NULL;
        t->space = s;
        atomic_store(&t->in_use, 1);
        thread_state *head = atomic_load(&s->threads);
        do {
            t->next = head;
        } while (!atomic_compare_exchange_weak(&s->threads, &head, t));
    }
    t->pub.user = NULL;
    t->pub.index = atomic_fetch_add(&s->nthreads, 1);
    reset_caches(t, __atomic_load_n(&s->fast.gen, __ATOMIC_ACQUIRE));
    if (s->client.thread_begin)
        s->client.thread_begin(s->client.user, &t->pub);
    return &t->pub;
}

void memtap_shadow_thread_end(memtap_shadow_thread *pub)
{
    if (!pub)
        return;
    thread_state *t = (thread_state *)(void *)pub;
    memtap_shadow *s = t->space;
    if (s->client.thread_end)
        s->client.thread_end(s->client.user, pub);
    atomic_store(&t->in_use, 0);
}

/* ---- lookups ---- */

static uint32_t hash_slot(uintptr_t base)
{
    return (uint32_t)fib_hash(base >> MEMTAP_SHADOW_UNIT_SHIFT, 6);
}

static int find_private(thread_state *t, uintptr_t base, intptr_t *offset)
{
    for (uint32_t i = 0; i < t->nprivate; i++) {
        if (t->priv[i].base == base) {
            *offset = t->priv[i].offset;
            t->private_hits++;
            return 1;
        }
    }
    /* pull what the global table gained since (it only ever grows) */
    memtap_shadow *s = t->space;
    uint32_t n = atomic_load_explicit(&s->nunits, memory_order_acquire);
    int found = 0;
    for (uint32_t i = t->nprivate; i < n; i++) {
        t->priv[i] = s->units[i];
        if (s->units[i].base == base) {
            *offset = s->units[i].offset;
            found = 1;
        }
    }
    t->nprivate = n;
    if (found)
        t->global_walks++;
    return found;
}

static int find_in_global(thread_state *t, uintptr_t base, intptr_t *offset)
{
    int i = find_global(t->space, base);
    if (i < 0)
        return 0;
    *offset = t->space->units[i].offset;
    t->global_walks++;
    return 1;
}

/* The callout: registers the unit of an address seen for the first time. */
static int register_on_use(memtap_shadow *s, uintptr_t base)
{
    if (lock(s) != 0)
        return -1;
    int i = add_unit(s, base);
    unlock(s);
    if (i < 0)
        return -1;
    if (s->client.create)
        s->client.create(s->client.user, base, base + UNIT_SIZE,
                         shadow_in(s, i, base));
    return 0;
}

/* The offset of base's unit, through the caches the client enabled. */
static int translate(thread_state *t, uintptr_t base, intptr_t *offset)
{
    memtap_shadow *s = t->space;
    uint32_t caches = s->client.caches;
    uint64_t gen = __atomic_load_n(&s->fast.gen, __ATOMIC_ACQUIRE);
    if (t->gen != gen)
        reset_caches(t, gen);
    if ((caches & MEMTAP_SHADOW_O3) && t->last.base == base) {
        t->last_hits++;
        *offset = t->last.offset;
        return 1;
    }
    unit_entry *slot = &t->hash[hash_slot(base)];
    if ((caches & MEMTAP_SHADOW_O2) && slot->base == base) {
        t->hash_hits++;
        *offset = slot->offset;
    } else {
        int (*walk)(thread_state *, uintptr_t, intptr_t *) =
            caches & MEMTAP_SHADOW_O1 ? find_private : find_in_global;
        if (!walk(t, base, offset) &&
            (register_on_use(s, base) != 0 || !walk(t, base, offset)))
            return 0;
        if (caches & MEMTAP_SHADOW_O2) {
            slot->base = base;
            slot->offset = *offset;
        }
    }
    if (caches & MEMTAP_SHADOW_O3) {
        t->last.base = base;
        t->last.offset = *offset;
    }
    return 1;
}

void *memtap_shadow_lookup(memtap_shadow_thread *pub, uintptr_t addr)
{
    thread_state *t = (thread_state *)(void *)pub;
    intptr_t offset;
    if (!translate(t, unit_of(addr), &offset))
        return NULL;
    return (void *)(scaled(t->space, addr) + (uintptr_t)offset);
}

void *memtap_shadow_ref_fill(memtap_shadow_thread *pub, memtap_shadow_ref *ref,
                             uintptr_t addr)
{
    thread_state *t = (thread_state *)(void *)pub;
    intptr_t offset;
    t->ref_fills++;
    if (!translate(t, unit_of(addr), &offset))
        return NULL;
    ref->base = unit_of(addr);
    ref->offset = offset;
    ref->gen = t->gen;
    return (void *)(scaled(t->space, addr) + (uintptr_t)offset);
}

unsigned memtap_shadow_bit(const memtap_shadow *s, uintptr_t addr)
{
    if (!s->sub_bits)
        return 0;
    uint32_t per_byte = 8 / s->sub_bits;
    return (unsigned)(((addr >> s->bit_shift) & (per_byte - 1)) * s->sub_bits);
}

/* ---- keeping the mapping current ---- */

/* Moves unit i's shadow to a new place clear of [avoid, avoid+len). */
static int relocate(memtap_shadow *s, int i, uintptr_t avoid, uint64_t len)
{
    void *to = reserve_shadow(s, s->units[i].base, avoid, len);
    if (!to)
        return MEMTAP_SHADOW_E_NOMEM;
    long r = raw_syscall6(SYS_mremap, (long)s->shadow_at[i],
                          (long)s->unit_shadow, (long)s->unit_shadow,
                          MREMAP_MAYMOVE | MREMAP_FIXED, (long)to, 0);
    if (RAW_FAILED(r)) {
        unmap(to, s->unit_shadow);
        return MEMTAP_SHADOW_E_NOMEM;
    }
    s->shadow_at[i] = (uintptr_t)to;
    s->units[i].offset =
        (intptr_t)((uintptr_t)to - scaled(s, s->units[i].base));
    s->relocations++;
    return MEMTAP_SHADOW_OK;
}

int memtap_shadow_make_room(memtap_shadow *s, uintptr_t addr, size_t len)
{
    if (lock(s) != 0)
        return MEMTAP_SHADOW_E_INVALID;
    int rc = MEMTAP_SHADOW_OK, moved = 0;
    uint32_t n = atomic_load(&s->nunits);
    for (uint32_t i = 0; i < n && rc == MEMTAP_SHADOW_OK; i++) {
        if (overlaps(s->shadow_at[i], s->unit_shadow, addr, len)) {
            rc = relocate(s, (int)i, addr, len);
            moved = 1;
        }
    }
    if (moved)
        __atomic_fetch_add(&s->fast.gen, 1, __ATOMIC_RELEASE);
    unlock(s);
    return rc;
}

void memtap_shadow_clear(memtap_shadow *s)
{
    uint32_t n = atomic_load(&s->nunits);
    for (uint32_t i = 0; i < n; i++)
        raw_syscall3(SYS_madvise, s->shadow_at[i], s->unit_shadow,
                     MADV_DONTNEED);
}

int memtap_shadow_is_shadow(const memtap_shadow *s, uintptr_t addr)
{
    uint32_t n = atomic_load(&((memtap_shadow *)(uintptr_t)s)->nunits);
    for (uint32_t i = 0; i < n; i++)
        if (addr - s->shadow_at[i] < s->unit_shadow)
            return 1;
    return 0;
}

static void call_create(memtap_shadow *s, uintptr_t lo, uintptr_t hi, int i)
{
    s->client.create(s->client.user, lo, hi, shadow_in(s, i, lo));
}

/* Moves shadow out of [addr, addr+len) and registers the units it spans.
 * Returns a status. */
static int claim_units(memtap_shadow *s, uintptr_t addr, size_t len)
{
    int rc = memtap_shadow_make_room(s, addr, len);
    if (rc != MEMTAP_SHADOW_OK)
        return rc;
    if (lock(s) != 0)
        return MEMTAP_SHADOW_E_INVALID;
    uintptr_t last = unit_of(addr + len - 1);
    for (uintptr_t u = unit_of(addr); rc >= 0; u += UNIT_SIZE) {
        rc = add_unit(s, u);
        if (u == last)
            break;
    }
    unlock(s);
    return rc < 0 ? rc : MEMTAP_SHADOW_OK;
}

int memtap_shadow_app_map(memtap_shadow *s, uintptr_t addr, size_t len)
{
    if (len == 0 || addr + len < addr)
        return MEMTAP_SHADOW_E_INVALID;
    int rc = claim_units(s, addr, len);
    if (rc < 0)
        return rc;
    if (s->client.create)
        each_piece(s, addr, len, call_create);
    return MEMTAP_SHADOW_OK;
}

/* Zeroes the metadata of the shadow units wholly inside [lo, hi) (unit i):
 * whole pages go back to the kernel, the edges are cleared in place. */
static void clear_piece(memtap_shadow *s, uintptr_t lo, uintptr_t hi, int i)
{
    uintptr_t grain = (uintptr_t)1 << s->bit_shift;
    lo = (lo + grain - 1) & ~(grain - 1);
    hi &= ~(grain - 1);
    if (lo >= hi)
        return;
    uint8_t *a = shadow_in(s, i, lo);
    uint8_t *b = shadow_in(s, i, hi);
    if (s->sub_bits) {
        /* edge bytes shared with neighbours: clear bit by bit */
        for (; lo < hi && memtap_shadow_bit(s, lo) != 0; lo += grain) {
            a = shadow_in(s, i, lo);
            *a &= (uint8_t) ~(((1u << s->sub_bits) - 1) << memtap_shadow_bit(s, lo));
        }
        for (; hi > lo && memtap_shadow_bit(s, hi) != 0; hi -= grain) {
            uint8_t *e = shadow_in(s, i, hi - grain);
            *e &= (uint8_t) ~(((1u << s->sub_bits) - 1) << memtap_shadow_bit(s, hi - grain));
        }
        if (lo >= hi)
            return;
        a = shadow_in(s, i, lo);
        b = shadow_in(s, i, hi);
    }
    uintptr_t pa = ((uintptr_t)a + PAGE - 1) & ~(uintptr_t)(PAGE - 1);
    uintptr_t pb = (uintptr_t)b & ~(uintptr_t)(PAGE - 1);
    if (pa < pb) {
        memset(a, 0, pa - (uintptr_t)a);
        raw_syscall3(SYS_madvise, pa, pb - pa, MADV_DONTNEED);
        memset((void *)pb, 0, (uintptr_t)b - pb);
    } else {
        memset(a, 0, (size_t)(b - a));
    }
}

static void remove_piece(memtap_shadow *s, uintptr_t lo, uintptr_t hi, int i)
{
    if (s->client.remove)
        s->client.remove(s->client.user, lo, hi, shadow_in(s, i, lo));
    clear_piece(s, lo, hi, i);
}

void memtap_shadow_app_unmap(memtap_shadow *s, uintptr_t addr, size_t len)
{
    if (len && addr + len > addr)
        each_piece(s, addr, len, remove_piece);
}

/* Copies the metadata of [from, from+len) to [to, to+len), unit piece by
 * unit piece (the two ranges never overlap: the kernel refuses that). */
static void copy_metadata(memtap_shadow *s, uintptr_t from, uintptr_t to,
                          size_t len)
{
    uintptr_t grain = (uintptr_t)1 << s->fast.shr;
    while (len >= grain) {
        size_t step = len;
        uintptr_t f_end = unit_of(from) + UNIT_SIZE, t_end = unit_of(to) + UNIT_SIZE;
        if (f_end && step > f_end - from)
            step = f_end - from;
        if (t_end && step > t_end - to)
            step = t_end - to;
        int fi = find_global(s, unit_of(from)), ti = find_global(s, unit_of(to));
        if (ti < 0)
            return;
        uint8_t *dst = shadow_in(s, ti, to);
        size_t bytes = (size_t)(scaled(s, to + step) - scaled(s, to));
        if (fi >= 0)
            memmove(dst, shadow_in(s, fi, from), bytes);
        else
            memset(dst, 0, bytes);
        from += step;
        to += step;
        len -= step;
    }
}

int memtap_shadow_app_move(memtap_shadow *s, uintptr_t old, size_t old_len,
                           uintptr_t new_addr, size_t new_len)
{
    if (((old | new_addr | old_len | new_len) & (PAGE - 1)) || new_len == 0)
        return MEMTAP_SHADOW_E_INVALID;
    size_t keep = old_len < new_len ? old_len : new_len;
    if (old_len > new_len)
        memtap_shadow_app_unmap(s, old + new_len, old_len - new_len);
    if (old == new_addr) {
        if (new_len > old_len)
            return memtap_shadow_app_map(s, new_addr + old_len,
                                         new_len - old_len);
        return MEMTAP_SHADOW_OK;
    }
    int rc = claim_units(s, new_addr, new_len);
    if (rc < 0)
        return rc;
    copy_metadata(s, old, new_addr, keep);
    each_piece(s, old, keep, clear_piece);
    if (new_len > old_len && s->client.create)
        each_piece(s, new_addr + old_len, new_len - old_len, call_create);
    return MEMTAP_SHADOW_OK;
}

/* ---- walking ---- */

typedef struct walk {
    int (*fn)(void *, uintptr_t, uintptr_t, void *);
    void *arg;
} walk;

/* Runs of resident pages in unit i's shadow, through mincore(2). */
static int walk_unit(memtap_shadow *s, int i, const walk *w)
{
    unsigned char vec[4096];
    uintptr_t start = s->shadow_at[i];
    uint64_t pages = s->unit_shadow / PAGE;
    uint64_t run = 0, run_len = 0;
    for (uint64_t p = 0; p < pages; p += sizeof vec) {
        uint64_t n = pages - p < sizeof vec ? pages - p : sizeof vec;
        if (raw_syscall3(SYS_mincore, start + p * PAGE, n * PAGE, vec) != 0)
            memset(vec, 1, n); /* cannot tell: walk it all */
        for (uint64_t k = 0; k <= n; k++) {
            int resident = k < n && (vec[k] & 1);
            if (resident && !run_len)
                run = p + k;
            if (resident) {
                run_len++;
                continue;
            }
            if (run_len && (k < n || p + n == pages)) {
                uintptr_t sa = start + run * PAGE;
                uintptr_t sb = sa + run_len * PAGE;
                intptr_t off = s->units[i].offset;
                uintptr_t lo = ((sa - (uintptr_t)off) >> s->fast.shl)
                               << s->fast.shr;
                uintptr_t hi = ((sb - (uintptr_t)off) >> s->fast.shl)
                               << s->fast.shr;
                int rc = w->fn(w->arg, lo, hi, (void *)sa);
                if (rc)
                    return rc;
                run_len = 0;
            }
        }
    }
    return 0;
}

int memtap_shadow_each_resident(memtap_shadow *s,
                                int (*fn)(void *, uintptr_t, uintptr_t,
                                          void *),
                                void *arg)
{
    walk w = { fn, arg };
    uint32_t n = atomic_load(&s->nunits);
    uint16_t order[MEMTAP_SHADOW_MAX_UNITS];
    for (uint32_t i = 0; i < n; i++) { /* insertion sort by base */
        uint32_t j = i;
        for (; j > 0 && s->units[order[j - 1]].base > s->units[i].base; j--)
            order[j] = order[j - 1];
        order[j] = (uint16_t)i;
    }
    for (uint32_t k = 0; k < n; k++) {
        int rc = walk_unit(s, order[k], &w);
        if (rc)
            return rc;
    }
    return 0;
}

static int add_run(void *arg, uintptr_t lo, uintptr_t hi, void *sh)
{
    (void)sh;
    memtap_shadow *s = ((void **)arg)[0];
    uint64_t *bytes = ((void **)arg)[1];
    *bytes += scaled(s, hi) - scaled(s, lo);
    return 0;
}

uint64_t memtap_shadow_resident_bytes(memtap_shadow *s)
{
    uint64_t bytes = 0;
    void *arg[2] = { s, &bytes };
    memtap_shadow_each_resident(s, add_run, arg);
    return bytes;
}

void memtap_shadow_get_stats(const memtap_shadow *s, memtap_shadow_stats *out)
{
    memset(out, 0, sizeof *out);
    memtap_shadow *m = (memtap_shadow *)(uintptr_t)s;
    uint64_t nthreads = 0;
    for (thread_state *t = atomic_load(&m->threads); t; t = t->next) {
        out->ref_fills += t->ref_fills;
        out->last_hits += t->last_hits;
        out->hash_hits += t->hash_hits;
        out->private_hits += t->private_hits;
        out->global_walks += t->global_walks;
        nthreads++;
    }
    out->units_registered = s->units_registered;
    out->relocations = s->relocations;
    out->units = atomic_load(&m->nunits);
    out->table_bytes = sizeof *s + nthreads * sizeof(thread_state);
    out->shadow_reserved = out->units * s->unit_shadow;
}
