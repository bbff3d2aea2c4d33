/*
 * test_shadow.c - the shadow-memory mapping (memtap/shadow.h) against real
 * mappings: translation for each scale, laziness, unit boundaries, high
 * addresses, mremap, munmap and reuse, shadow moved out of a MAP_FIXED
 * mapping's way, the caches' counters, and threads.
 */
#define _GNU_SOURCE
#include "memtap/shadow.h"

#include "check.h"

#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#define UNIT (1ull << 32)
#define PAGE 4096ull
/* Application addresses for the tests that need fixed places: free in
 * plain and in sanitized processes alike (80 TiB). */
#define TEST_UNIT 0x500100000000ull

static memtap_shadow *space_of(uint32_t app_bytes, uint32_t shadow_bits,
                               uint32_t caches)
{
    memtap_shadow_client c;
    memset(&c, 0, sizeof c);
    c.app_bytes = app_bytes;
    c.shadow_bits = shadow_bits;
    c.caches = caches;
    memtap_shadow *s = NULL;
    CHECK_EQ_U64(memtap_shadow_create(&c, &s), MEMTAP_SHADOW_OK);
    return s;
}

static void *map_at(uint64_t addr, uint64_t len)
{
    void *p = mmap((void *)addr, len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
                       (addr ? MAP_FIXED_NOREPLACE : 0),
                   -1, 0);
    CHECK(p != MAP_FAILED && (!addr || p == (void *)addr));
    return p == MAP_FAILED ? NULL : p;
}

static void test_invalid(void)
{
    memtap_shadow_client c;
    memset(&c, 0, sizeof c);
    memtap_shadow *s = (memtap_shadow *)1;
    c.app_bytes = 3;
    c.shadow_bits = 8;
    CHECK_EQ_U64(memtap_shadow_create(&c, &s), (uint64_t)MEMTAP_SHADOW_E_INVALID);
    CHECK(s == NULL);
    c.app_bytes = 1;
    c.shadow_bits = 0;
    CHECK_EQ_U64(memtap_shadow_create(&c, &s), (uint64_t)MEMTAP_SHADOW_E_INVALID);
}

/* For each scale of the issue: neighbouring granules have neighbouring
 * metadata, sizes as the scale says, and a value written through one path
 * (plain lookup) reads back through another (reference cache). */
static void test_scales(void)
{
    static const struct { uint32_t app, bits; } scales[] = {
        { 1, 8 }, { 1, 32 }, { 4, 8 }, { 1, 2 }, { 64, 64 }, { 4, 64 },
    };
    char *app = map_at(0, 64 * 1024);
    for (size_t k = 0; k < sizeof scales / sizeof *scales; k++) {
        memtap_shadow *s = space_of(scales[k].app, scales[k].bits, 0);
        memtap_shadow_thread *t = memtap_shadow_thread_begin(s);
        CHECK_EQ_U64(memtap_shadow_app_map(s, (uintptr_t)app, 64 * 1024), 0);
        uintptr_t a = (uintptr_t)app + 4096;
        uint8_t *s0 = memtap_shadow_lookup(t, a);
        uint8_t *s1 = memtap_shadow_lookup(t, a + scales[k].app);
        CHECK(s0 != NULL && s1 != NULL);
        CHECK(memtap_shadow_is_shadow(s, (uintptr_t)s0));
        CHECK(!memtap_shadow_is_shadow(s, a));
        if (scales[k].bits >= 8) {
            CHECK_EQ_U64((uint64_t)(s1 - s0), scales[k].bits / 8);
            /* every byte of a granule shares its metadata */
            CHECK(memtap_shadow_lookup(t, a + scales[k].app - 1) == s0);
            CHECK_EQ_U64(memtap_shadow_bit(s, a + 1), 0);
        } else {
            /* 1B-to-2b: four application bytes per shadow byte */
            CHECK(s1 == s0);
            CHECK(memtap_shadow_lookup(t, a + 4) == s0 + 1);
            for (unsigned i = 0; i < 4; i++)
                CHECK_EQ_U64(memtap_shadow_bit(s, a + i), 2 * i);
        }
        memtap_shadow_ref ref = MEMTAP_SHADOW_REF_INIT;
        const struct memtap_shadow_fast *f = memtap_shadow_fast_of(s);
        *s0 = 0x5a;
        CHECK(memtap_shadow_ref_lookup(t, f, &ref, a) == s0);
        CHECK_EQ_U64(*(uint8_t *)memtap_shadow_ref_lookup(t, f, &ref, a), 0x5a);
        CHECK(memtap_shadow_ref_apply(f, &ref, a + scales[k].app) == s1);
        memtap_shadow_thread_end(t);
        memtap_shadow_destroy(s);
    }
    munmap(app, 64 * 1024);
}

static int count_resident(void *arg, uintptr_t lo, uintptr_t hi, void *sh)
{
    (void)sh;
    uint64_t *n = arg;
    n[0]++;
    n[1] += hi - lo;
    return 0;
}

/* Shadow costs nothing until written: a 1 GiB application reservation
 * has no resident shadow; three writes in three pages make three pages. */
static void test_lazy(void)
{
    memtap_shadow *s = space_of(1, 8, 0);
    memtap_shadow_thread *t = memtap_shadow_thread_begin(s);
    void *app = mmap(NULL, 1ull << 30, PROT_NONE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    CHECK(app != MAP_FAILED);
    uintptr_t a = (uintptr_t)app;
    CHECK_EQ_U64(memtap_shadow_app_map(s, a, 1ull << 30), 0);
    uint64_t n[2] = { 0, 0 };
    memtap_shadow_each_resident(s, count_resident, n);
    CHECK_EQ_U64(n[0], 0);
    /* reading metadata does not make it resident either... */
    volatile uint8_t *r = memtap_shadow_lookup(t, a + (100ull << 20));
    CHECK_EQ_U64(*r, 0);
    uint64_t where[3] = { 12345, 300ull << 20, (1ull << 30) - 1 };
    for (int i = 0; i < 3; i++)
        *(uint8_t *)memtap_shadow_lookup(t, a + where[i]) = 1;
    n[0] = n[1] = 0;
    memtap_shadow_each_resident(s, count_resident, n);
    /* ...except the page that was read, which maps the zero page: the
     * kernel reports it, and the walk reads zeros there */
    CHECK(n[1] == 3 * PAGE || n[1] == 4 * PAGE);
    CHECK(n[0] >= 3 && n[0] <= 4);
    memtap_shadow_app_unmap(s, a, 1ull << 30);
    munmap(app, 1ull << 30);
    memtap_shadow_thread_end(t);
    memtap_shadow_destroy(s);
}

typedef struct seen {
    int n;
    uintptr_t lo[4], hi[4];
    uint8_t first[4];
} seen;

static void on_create(void *user, uintptr_t lo, uintptr_t hi, void *sh)
{
    (void)sh;
    seen *w = user;
    if (w->n < 4) {
        w->lo[w->n] = lo;
        w->hi[w->n++] = hi;
    }
}

static void on_remove(void *user, uintptr_t lo, uintptr_t hi, void *sh)
{
    seen *w = user;
    if (w->n < 4) {
        w->lo[w->n] = lo;
        w->hi[w->n] = hi;
        w->first[w->n++] = *(uint8_t *)sh;
    }
}

/* A mapping across a unit boundary: two units, created piece by piece,
 * with contiguous shadow (an access straddling the boundary finds its
 * metadata in one run); remove sees the metadata before it is cleared. */
static void test_unit_boundary(void)
{
    seen made = { 0 };
    memtap_shadow_client c;
    memset(&c, 0, sizeof c);
    c.app_bytes = 1;
    c.shadow_bits = 8;
    c.user = &made;
    c.create = on_create;
    c.remove = on_remove;
    memtap_shadow *s = NULL;
    CHECK_EQ_U64(memtap_shadow_create(&c, &s), 0);
    memtap_shadow_thread *t = memtap_shadow_thread_begin(s);
    uintptr_t b = TEST_UNIT;
    char *app = map_at(b - 2 * PAGE, 4 * PAGE);
    CHECK_EQ_U64(memtap_shadow_app_map(s, b - 2 * PAGE, 4 * PAGE), 0);
    CHECK_EQ_U64(made.n, 2);
    CHECK_EQ_U64(made.lo[0], b - 2 * PAGE);
    CHECK_EQ_U64(made.hi[0], b);
    CHECK_EQ_U64(made.lo[1], b);
    CHECK_EQ_U64(made.hi[1], b + 2 * PAGE);
    uint8_t *below = memtap_shadow_lookup(t, b - 1);
    uint8_t *above = memtap_shadow_lookup(t, b);
    CHECK(below + 1 == above);
    memtap_shadow_stats st;
    memtap_shadow_get_stats(s, &st);
    CHECK_EQ_U64(st.units, 2);
    *(uint8_t *)memtap_shadow_lookup(t, b - PAGE) = 7;
    *above = 9;
    *below = 8;
    /* unmapping calls remove per piece (same user), then the metadata
     * reads zero */
    made.n = 0;
    memtap_shadow_app_unmap(s, b - PAGE, 2 * PAGE);
    CHECK_EQ_U64(made.n, 2);
    CHECK_EQ_U64(made.lo[0], b - PAGE);
    CHECK_EQ_U64(made.hi[1], b + PAGE);
    CHECK_EQ_U64(*below, 0);
    CHECK_EQ_U64(made.first[0], 7);
    CHECK_EQ_U64(made.first[1], 9);
    CHECK_EQ_U64(*above, 0);
    memtap_shadow_thread_end(t);
    memtap_shadow_destroy(s);
    if (app)
        munmap(app, 4 * PAGE);
}

/* The remove callback reads the metadata before it goes. */
static void test_remove_sees_metadata(void)
{
    seen gone = { 0 };
    memtap_shadow_client c;
    memset(&c, 0, sizeof c);
    c.app_bytes = 1;
    c.shadow_bits = 8;
    c.user = &gone;
    c.remove = on_remove;
    memtap_shadow *s = NULL;
    CHECK_EQ_U64(memtap_shadow_create(&c, &s), 0);
    memtap_shadow_thread *t = memtap_shadow_thread_begin(s);
    char *app = map_at(0, 2 * PAGE);
    uintptr_t a = (uintptr_t)app;
    *(uint8_t *)memtap_shadow_lookup(t, a + PAGE) = 42;
    memtap_shadow_app_unmap(s, a + PAGE, PAGE);
    CHECK_EQ_U64(gone.n, 1);
    CHECK_EQ_U64(gone.lo[0], a + PAGE);
    CHECK_EQ_U64(gone.first[0], 42);
    CHECK_EQ_U64(*(uint8_t *)memtap_shadow_lookup(t, a + PAGE), 0);
    /* munmap then reuse: the same unit, no new entry, fresh metadata */
    munmap(app + PAGE, PAGE);
    char *again = mmap(app + PAGE, PAGE, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    CHECK(again == app + PAGE);
    CHECK_EQ_U64(memtap_shadow_app_map(s, a + PAGE, PAGE), 0);
    CHECK_EQ_U64(*(uint8_t *)memtap_shadow_lookup(t, a + PAGE), 0);
    memtap_shadow_stats st;
    memtap_shadow_get_stats(s, &st);
    CHECK_EQ_U64(st.units_registered, 1);
    munmap(app, 2 * PAGE);
    memtap_shadow_thread_end(t);
    memtap_shadow_destroy(s);
}

/* mremap that moves a block: its metadata moves with it (4B-to-1B). */
static void test_mremap_moves(void)
{
    memtap_shadow *s = space_of(4, 8, 0);
    memtap_shadow_thread *t = memtap_shadow_thread_begin(s);
    char *old = map_at(0, 4 * PAGE);
    uintptr_t o = (uintptr_t)old;
    CHECK_EQ_U64(memtap_shadow_app_map(s, o, 4 * PAGE), 0);
    for (int i = 0; i < 4; i++)
        *(uint8_t *)memtap_shadow_lookup(t, o + (uint64_t)i * PAGE + 8) =
            (uint8_t)(i + 1);
    char *to = map_at(TEST_UNIT + 16 * PAGE, 8 * PAGE);
    char *moved = mremap(old, 4 * PAGE, 6 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED,
                         to);
    CHECK(moved == to);
    uintptr_t n = (uintptr_t)moved;
    CHECK_EQ_U64(memtap_shadow_app_move(s, o, 4 * PAGE, n, 6 * PAGE), 0);
    for (int i = 0; i < 4; i++) {
        CHECK_EQ_U64(*(uint8_t *)memtap_shadow_lookup(t, n + (uint64_t)i * PAGE + 8),
                     (uint64_t)(i + 1));
        CHECK_EQ_U64(*(uint8_t *)memtap_shadow_lookup(t, o + (uint64_t)i * PAGE + 8),
                     0);
    }
    CHECK_EQ_U64(*(uint8_t *)memtap_shadow_lookup(t, n + 5 * PAGE), 0);
    CHECK_EQ_U64(memtap_shadow_app_move(s, o + 1, PAGE, n, PAGE),
                 (uint64_t)MEMTAP_SHADOW_E_INVALID);
    munmap(moved, 8 * PAGE);
    memtap_shadow_thread_end(t);
    memtap_shadow_destroy(s);
}

/* An application mapping that lands on shadow: the shadow moves first,
 * keeps its metadata, and every cache (reference cache included) follows
 * the new translation. */
static void test_conflict_moves_shadow(void)
{
    memtap_shadow *s = space_of(1, 8, 0);
    memtap_shadow_thread *t = memtap_shadow_thread_begin(s);
    const struct memtap_shadow_fast *f = memtap_shadow_fast_of(s);
    char *app = map_at(0, PAGE);
    uintptr_t a = (uintptr_t)app;
    memtap_shadow_ref ref = MEMTAP_SHADOW_REF_INIT;
    uint8_t *before = memtap_shadow_ref_lookup(t, f, &ref, a);
    *before = 77;
    uintptr_t victim = (uintptr_t)before & ~(uintptr_t)(PAGE - 1);
    CHECK_EQ_U64(memtap_shadow_app_map(s, victim, 2 * PAGE), 0);
    memtap_shadow_stats st;
    memtap_shadow_get_stats(s, &st);
    CHECK_EQ_U64(st.relocations, 1);
    CHECK(!memtap_shadow_is_shadow(s, victim));
    /* the range is free for the program now */
    char *fixed = mmap((void *)victim, 2 * PAGE, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    CHECK(fixed == (void *)victim);
    uint8_t *after = memtap_shadow_ref_lookup(t, f, &ref, a);
    CHECK(after != before);
    CHECK_EQ_U64(*after, 77);
    CHECK(memtap_shadow_lookup(t, a) == after);
    /* the program's new mapping has shadow of its own */
    uint8_t *mine = memtap_shadow_lookup(t, victim);
    CHECK(mine != NULL && memtap_shadow_is_shadow(s, (uintptr_t)mine));
    *mine = 1;
    CHECK_EQ_U64(*after, 77);
    munmap(fixed, 2 * PAGE);
    munmap(app, PAGE);
    memtap_shadow_thread_end(t);
    memtap_shadow_destroy(s);
}

/* High addresses (the stack's unit) register on first use. */
static void test_high_and_on_use(void)
{
    memtap_shadow *s = space_of(1, 8, 0);
    memtap_shadow_thread *t = memtap_shadow_thread_begin(s);
    int local = 0;
    uint8_t *sh = memtap_shadow_lookup(t, (uintptr_t)&local);
    CHECK(sh != NULL);
    *sh = 3;
    CHECK(memtap_shadow_lookup(t, 0x7ffffffff000ull) != NULL);
    memtap_shadow_stats st;
    memtap_shadow_get_stats(s, &st);
    CHECK(st.units >= 1 && st.units <= 2);
    CHECK(st.table_bytes > 0 && st.shadow_reserved == st.units * UNIT);
    memtap_shadow_thread_end(t);
    memtap_shadow_destroy(s);
}

/* Where lookups are answered, per cache configuration. */
static void test_cache_counters(void)
{
    char *app = map_at(0, PAGE);
    /* b is in the next unit: neighbouring units never share a hashtable
     * slot, so the counts below do not depend on where app landed */
    uintptr_t a = (uintptr_t)app, b = (a & ~(UNIT - 1)) + UNIT;
    static const uint32_t configs[] = {
        MEMTAP_SHADOW_NO_CACHE, MEMTAP_SHADOW_O1,
        MEMTAP_SHADOW_O1 | MEMTAP_SHADOW_O2, MEMTAP_SHADOW_ALL_CACHES,
    };
    for (size_t k = 0; k < 4; k++) {
        memtap_shadow *s = space_of(1, 8, configs[k]);
        memtap_shadow_thread *t = memtap_shadow_thread_begin(s);
        /* 100 lookups in one unit, then 100 alternating between two */
        for (int i = 0; i < 100; i++)
            memtap_shadow_lookup(t, a + (uint64_t)i);
        for (int i = 0; i < 100; i++)
            memtap_shadow_lookup(t, i & 1 ? b : a);
        memtap_shadow_stats st;
        memtap_shadow_get_stats(s, &st);
        uint64_t total = st.last_hits + st.hash_hits + st.private_hits +
                         st.global_walks;
        CHECK_EQ_U64(total, 200);
        CHECK_EQ_U64(st.units_registered, 2);
        /* Only the first lookup of each unit reaches the global table (it
         * registers the unit, and O1 pulls the new entry); the other 198
         * are answered by the fastest cache enabled.  With O3, the first
         * run hits the last unit 99 times and the alternation's first
         * lookup (a again) once more; the remaining 98 alternations miss
         * it and hit the hashtable. */
        switch (k) {
        case 0: CHECK_EQ_U64(st.global_walks, 200); break;
        case 1:
            CHECK_EQ_U64(st.global_walks, 2);
            CHECK_EQ_U64(st.private_hits, 198);
            break;
        case 2: CHECK_EQ_U64(st.hash_hits, 198); break;
        case 3:
            CHECK_EQ_U64(st.last_hits, 100);
            CHECK_EQ_U64(st.hash_hits, 98);
            break;
        }
        memtap_shadow_ref ref = MEMTAP_SHADOW_REF_INIT;
        const struct memtap_shadow_fast *f = memtap_shadow_fast_of(s);
        for (int i = 0; i < 1000; i++)
            memtap_shadow_ref_lookup(t, f, &ref, a + (uint64_t)(i % 4096));
        memtap_shadow_get_stats(s, &st);
        CHECK_EQ_U64(st.ref_fills, 1);
        memtap_shadow_thread_end(t);
        memtap_shadow_destroy(s);
    }
    munmap(app, PAGE);
}

typedef struct worker_arg {
    memtap_shadow *s;
    uint64_t *words;
    unsigned index;
} worker_arg;

static void on_thread(void *user, memtap_shadow_thread *t)
{
    unsigned *begun = user;
    __atomic_fetch_or(begun, 1u << t->index, __ATOMIC_RELAXED);
    t->user = (void *)(uintptr_t)(t->index + 1);
}

/* Threads count into shared metadata without locks: every increment
 * arrives. */
static void *worker(void *p)
{
    worker_arg *w = p;
    memtap_shadow_thread *t = memtap_shadow_thread_begin(w->s);
    CHECK(t->user == (void *)(uintptr_t)(t->index + 1));
    memtap_shadow_ref ref = MEMTAP_SHADOW_REF_INIT;
    const struct memtap_shadow_fast *f = memtap_shadow_fast_of(w->s);
    for (int i = 0; i < 100000; i++) {
        uint64_t *c = memtap_shadow_ref_lookup(t, f, &ref,
                                               (uintptr_t)&w->words[i % 64]);
        __atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
    }
    memtap_shadow_thread_end(t);
    return NULL;
}

static void test_threads(void)
{
    unsigned begun = 0;
    memtap_shadow_client c;
    memset(&c, 0, sizeof c);
    c.app_bytes = 8;
    c.shadow_bits = 64;
    c.user = &begun;
    c.thread_begin = on_thread;
    memtap_shadow *s = NULL;
    CHECK_EQ_U64(memtap_shadow_create(&c, &s), 0);
    uint64_t *words = map_at(0, PAGE);
    pthread_t th[4];
    worker_arg args[4];
    for (unsigned i = 0; i < 4; i++) {
        args[i] = (worker_arg){ s, words, i };
        pthread_create(&th[i], NULL, worker, &args[i]);
    }
    for (unsigned i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    CHECK_EQ_U64(begun, 0xf);
    memtap_shadow_thread *t = memtap_shadow_thread_begin(s);
    uint64_t sum = 0;
    for (int i = 0; i < 64; i++)
        sum += *(uint64_t *)memtap_shadow_lookup(t, (uintptr_t)&words[i]);
    CHECK_EQ_U64(sum, 400000);
    memtap_shadow_thread_end(t);
    memtap_shadow_destroy(s);
    munmap(words, PAGE);
}

int main(void)
{
    test_invalid();
    test_scales();
    test_lazy();
    test_unit_boundary();
    test_remove_sees_metadata();
    test_mremap_moves();
    test_conflict_moves_shadow();
    test_high_and_on_use();
    test_cache_counters();
    test_threads();
    return CHECK_DONE();
}
