/*
 * shadow_bench.c - lookups per second of memtap's shadow memory (the Umbra
 * mapping) against two baselines implemented here for the comparison: a
 * flat hash map from application page to shadow page, and a Memcheck-style
 * two-level table (a primary map over the low 64 GiB in 64 KiB chunks, an
 * auxiliary hash with a small move-to-front cache above it).
 *
 * Application memory: 8 regions of 256 MiB spread over the 47-bit address
 * space (reserved PROT_NONE; lookups never touch them).  Streams of
 * addresses come in groups of 4 that fall in one region (a basic block's
 * references to one object, which Umbra's reference groups exploit):
 * sequential (8-byte steps, region after region), strided (4160-byte
 * steps, another region every 1024 groups) and random (a random region
 * per group, random offsets).  Every lookup translates the address and
 * increments the shadow byte (1B-to-1B, the paper's Figure 5 setting).
 * 16 "instructions" take the groups in turn, each with its own reference
 * cache.  Umbra runs with its caches enabled cumulatively: none, O1, +O2,
 * +O3, +O4 (reference caches), +O6 (one lookup per group).
 *
 * usage: shadow_bench [RUNS [LOOKUPS]]      (defaults: 5 runs, 4M lookups)
 *        shadow_bench --verify              (all schemes agree, small run)
 */
#define _GNU_SOURCE
#include "memtap/shadow.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define REGIONS 8
#define REGION_SIZE (256ull << 20)
#define GROUP 4
#define INSNS 16
#define PAGE 4096ull
#define ARENA_SIZE (8ull << 30)

static uintptr_t region_at[REGIONS];

/* ---- a bump allocator of lazily backed memory for the baselines ---- */

typedef struct arena {
    uint8_t *base;
    _Atomic uint64_t used;
} arena;

static void *arena_get(arena *a, uint64_t size)
{
    uint64_t at = __atomic_fetch_add(&a->used, size, __ATOMIC_RELAXED);
    return at + size <= ARENA_SIZE ? a->base + at : NULL;
}

static uint64_t hash64(uint64_t k) { return k * 0x9e3779b97f4a7c15ull; }

/* ---- baseline 1: flat hash map, application page -> shadow page ---- */

typedef struct flat_map {
    uint64_t mask;
    _Atomic uint64_t *keys;         /* page number + 1, 0 = empty */
    uint8_t *_Atomic *vals;
    arena mem;
} flat_map;

static uint8_t *slot_value(uint8_t *_Atomic *v, arena *mem, int inserted,
                           uint64_t size)
{
    if (inserted) {
        uint8_t *p = arena_get(mem, size);
        __atomic_store_n(v, p, __ATOMIC_RELEASE);
        return p;
    }
    uint8_t *p;
    while (!(p = __atomic_load_n(v, __ATOMIC_ACQUIRE)))
        ; /* another thread is inserting it */
    return p;
}

/* Finds or inserts key in an open-addressing table; returns its value. */
static uint8_t *table_get(_Atomic uint64_t *keys, uint8_t *_Atomic *vals,
                          uint64_t mask, arena *mem, uint64_t key,
                          uint64_t size)
{
    for (uint64_t i = hash64(key) >> 20 & mask;; i = (i + 1) & mask) {
        uint64_t k = __atomic_load_n(&keys[i], __ATOMIC_ACQUIRE);
        if (k == key)
            return slot_value(&vals[i], mem, 0, size);
        if (k == 0) {
            uint64_t empty = 0;
            if (__atomic_compare_exchange_n(&keys[i], &empty, key, 0,
                                            __ATOMIC_ACQ_REL,
                                            __ATOMIC_ACQUIRE))
                return slot_value(&vals[i], mem, 1, size);
            if (empty == key)
                return slot_value(&vals[i], mem, 0, size);
        }
    }
}

static uint8_t *flat_lookup(flat_map *m, uintptr_t a)
{
    uint8_t *page = table_get(m->keys, m->vals, m->mask, &m->mem,
                              (a >> 12) + 1, PAGE);
    return page + (a & (PAGE - 1));
}

/* ---- baseline 2: Memcheck-style two-level table ---- */

#define PRIMARY_BITS 20                  /* 2^20 x 64 KiB = 64 GiB */
#define SECONDARY (64ull << 10)
#define AUX_L1 8

typedef struct two_level {
    uint8_t *_Atomic *primary;
    _Atomic uint64_t *aux_keys;         /* chunk number + 1 */
    uint8_t *_Atomic *aux_vals;
    uint64_t aux_mask;
    arena mem;
} two_level;

typedef struct aux_cache {              /* per thread, move-to-front */
    uint64_t key[AUX_L1];
    uint8_t *val[AUX_L1];
} aux_cache;

static __thread aux_cache tls_aux;

static uint8_t *two_level_lookup(two_level *m, uintptr_t a)
{
    uint64_t chunk = a >> 16;
    if (chunk < (1ull << PRIMARY_BITS)) {
        uint8_t *_Atomic *e = &m->primary[chunk];
        uint8_t *sec = __atomic_load_n(e, __ATOMIC_ACQUIRE);
        if (!sec) {
            uint8_t *mine = arena_get(&m->mem, SECONDARY), *none = NULL;
            sec = __atomic_compare_exchange_n(e, &none, mine, 0,
                                              __ATOMIC_ACQ_REL,
                                              __ATOMIC_ACQUIRE)
                      ? mine
                      : none;
        }
        return sec + (a & (SECONDARY - 1));
    }
    aux_cache *c = &tls_aux;
    uint64_t key = chunk + 1;
    for (int i = 0; i < AUX_L1; i++) {
        if (c->key[i] == key) {
            uint8_t *v = c->val[i];
            if (i) { /* one step to the front, as Memcheck's auxmap_L1 */
                c->key[i] = c->key[i - 1];
                c->val[i] = c->val[i - 1];
                c->key[i - 1] = key;
                c->val[i - 1] = v;
            }
            return v + (a & (SECONDARY - 1));
        }
    }
    uint8_t *v = table_get(m->aux_keys, m->aux_vals, m->aux_mask, &m->mem,
                           key, SECONDARY);
    memmove(&c->key[1], &c->key[0], (AUX_L1 - 1) * sizeof c->key[0]);
    memmove(&c->val[1], &c->val[0], (AUX_L1 - 1) * sizeof c->val[0]);
    c->key[0] = key;
    c->val[0] = v;
    return v + (a & (SECONDARY - 1));
}

/* ---- the schemes under test ---- */

enum scheme { FLAT, TWO_LEVEL, U_NONE, U_O1, U_O2, U_O3, U_O4, U_O6, SCHEMES };
static const char *const scheme_name[SCHEMES] = {
    "flat hash", "2-level (Memcheck)", "Umbra: table only", "+O1 private",
    "+O2 hashtable", "+O3 last unit", "+O4 ref cache", "+O6 ref groups",
};

typedef struct bench_ctx {
    enum scheme scheme;
    flat_map *flat;
    two_level *two;
    memtap_shadow *umbra;
    const uintptr_t *stream;
    size_t n;
} bench_ctx;

static void run_stream(const bench_ctx *c)
{
    const uintptr_t *s = c->stream;
    size_t n = c->n;
    switch (c->scheme) {
    case FLAT:
        for (size_t i = 0; i < n; i++)
            (*(volatile uint8_t *)flat_lookup(c->flat, s[i]))++;
        return;
    case TWO_LEVEL:
        for (size_t i = 0; i < n; i++)
            (*(volatile uint8_t *)two_level_lookup(c->two, s[i]))++;
        return;
    default:
        break;
    }
    memtap_shadow_thread *t = memtap_shadow_thread_begin(c->umbra);
    const struct memtap_shadow_fast *f = memtap_shadow_fast_of(c->umbra);
    memtap_shadow_ref refs[INSNS];
    for (int k = 0; k < INSNS; k++)
        refs[k] = (memtap_shadow_ref)MEMTAP_SHADOW_REF_INIT;
    if (c->scheme < U_O4) {
        for (size_t i = 0; i < n; i++)
            (*(volatile uint8_t *)memtap_shadow_lookup(t, s[i]))++;
    } else if (c->scheme == U_O4) {
        for (size_t i = 0; i < n; i++)
            (*(volatile uint8_t *)memtap_shadow_ref_lookup(
                t, f, &refs[(i / GROUP) % INSNS], s[i]))++;
    } else {
        for (size_t i = 0; i + GROUP <= n; i += GROUP) {
            memtap_shadow_ref *r = &refs[(i / GROUP) % INSNS];
            (*(volatile uint8_t *)memtap_shadow_ref_lookup(t, f, r, s[i]))++;
            for (int g = 1; g < GROUP; g++)
                (*(volatile uint8_t *)memtap_shadow_ref_apply(f, r, s[i + g]))++;
        }
    }
    memtap_shadow_thread_end(t);
}

static void *thread_main(void *p)
{
    run_stream(p);
    return NULL;
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Runs the streams (one per thread) once; returns ns per lookup per
 * thread. */
static double timed(bench_ctx *ctx, int threads)
{
    pthread_t th[2];
    double t0 = now_ns();
    for (int k = 1; k < threads; k++)
        pthread_create(&th[k], NULL, thread_main, &ctx[k]);
    run_stream(&ctx[0]);
    for (int k = 1; k < threads; k++)
        pthread_join(th[k], NULL);
    return (now_ns() - t0) / (double)ctx[0].n;
}

/* ---- streams ---- */

enum stream_kind { SEQUENTIAL, STRIDED, RANDOM, STREAMS };
static const char *const stream_name[STREAMS] = { "sequential", "strided",
                                                  "random" };

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void make_stream(uintptr_t *s, size_t n, enum stream_kind kind,
                        uint64_t seed)
{
    uint64_t rng = seed * 2654435761u + 1;
    uint64_t per_region = n / REGIONS;
    for (size_t i = 0; i < n; i += GROUP) {
        uint64_t r, off;
        switch (kind) {
        case SEQUENTIAL:
            r = (i / per_region) % REGIONS;
            off = (i % per_region) * 8;
            break;
        case STRIDED:
            r = (i / (GROUP * 1024)) % REGIONS;
            off = (i / GROUP) * 4160 % (REGION_SIZE - 4096);
            break;
        default:
            r = rng_next(&rng) % REGIONS;
            off = rng_next(&rng) % (REGION_SIZE - 4096) & ~7ull;
            break;
        }
        for (size_t g = 0; g < GROUP && i + g < n; g++) {
            uint64_t o = kind == RANDOM && g ? rng_next(&rng) % 64 * 8 : g * 8;
            s[i + g] = region_at[r] + (off + o) % REGION_SIZE;
        }
    }
}

/* ---- setting up and tearing down a scheme ---- */

static void *map_lazy(uint64_t size)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static uint64_t resident(const void *p, uint64_t size)
{
    uint64_t pages = size / PAGE, n = 0;
    unsigned char *vec = malloc(pages);
    if (vec && mincore((void *)p, size, vec) == 0)
        for (uint64_t i = 0; i < pages; i++)
            n += vec[i] & 1;
    free(vec);
    return n * PAGE;
}

typedef struct scheme_state {
    flat_map flat;
    two_level two;
    memtap_shadow *umbra;
} scheme_state;

static int scheme_open(scheme_state *st, enum scheme s)
{
    memset(st, 0, sizeof *st);
    if (s == FLAT) {
        st->flat.mask = (1ull << 21) - 1;
        st->flat.keys = map_lazy((st->flat.mask + 1) * 8);
        st->flat.vals = map_lazy((st->flat.mask + 1) * 8);
        st->flat.mem.base = map_lazy(ARENA_SIZE);
        return st->flat.keys && st->flat.vals && st->flat.mem.base ? 0 : -1;
    }
    if (s == TWO_LEVEL) {
        st->two.primary = map_lazy((1ull << PRIMARY_BITS) * 8);
        st->two.aux_mask = (1ull << 16) - 1;
        st->two.aux_keys = map_lazy((st->two.aux_mask + 1) * 8);
        st->two.aux_vals = map_lazy((st->two.aux_mask + 1) * 8);
        st->two.mem.base = map_lazy(ARENA_SIZE);
        memset(&tls_aux, 0, sizeof tls_aux);
        return st->two.primary && st->two.mem.base ? 0 : -1;
    }
    static const uint32_t caches[] = {
        MEMTAP_SHADOW_NO_CACHE, MEMTAP_SHADOW_O1,
        MEMTAP_SHADOW_O1 | MEMTAP_SHADOW_O2, MEMTAP_SHADOW_ALL_CACHES,
        MEMTAP_SHADOW_ALL_CACHES, MEMTAP_SHADOW_ALL_CACHES,
    };
    memtap_shadow_client c;
    memset(&c, 0, sizeof c);
    c.app_bytes = 1;
    c.shadow_bits = 8;
    c.caches = caches[s - U_NONE];
    if (memtap_shadow_create(&c, &st->umbra) != 0)
        return -1;
    for (int r = 0; r < REGIONS; r++)
        if (memtap_shadow_app_map(st->umbra, region_at[r], REGION_SIZE) != 0)
            return -1;
    return 0;
}

/* Shadow and table bytes the scheme holds in memory. */
static uint64_t scheme_memory(scheme_state *st, enum scheme s)
{
    if (s == FLAT)
        return resident(st->flat.mem.base, ARENA_SIZE) +
               resident(st->flat.keys, (st->flat.mask + 1) * 8) +
               resident(st->flat.vals, (st->flat.mask + 1) * 8);
    if (s == TWO_LEVEL)
        return resident(st->two.mem.base, ARENA_SIZE) +
               resident(st->two.primary, (1ull << PRIMARY_BITS) * 8) +
               resident(st->two.aux_keys, (st->two.aux_mask + 1) * 8) +
               resident(st->two.aux_vals, (st->two.aux_mask + 1) * 8);
    memtap_shadow_stats stats;
    memtap_shadow_get_stats(st->umbra, &stats);
    return memtap_shadow_resident_bytes(st->umbra) + stats.table_bytes;
}

static void scheme_close(scheme_state *st, enum scheme s)
{
    if (s == FLAT) {
        munmap(st->flat.keys, (st->flat.mask + 1) * 8);
        munmap(st->flat.vals, (st->flat.mask + 1) * 8);
        munmap(st->flat.mem.base, ARENA_SIZE);
    } else if (s == TWO_LEVEL) {
        munmap(st->two.primary, (1ull << PRIMARY_BITS) * 8);
        munmap(st->two.aux_keys, (st->two.aux_mask + 1) * 8);
        munmap(st->two.aux_vals, (st->two.aux_mask + 1) * 8);
        munmap(st->two.mem.base, ARENA_SIZE);
    } else {
        memtap_shadow_destroy(st->umbra);
    }
}

static uint8_t *scheme_lookup(scheme_state *st, enum scheme s,
                              memtap_shadow_thread *t, uintptr_t a)
{
    if (s == FLAT)
        return flat_lookup(&st->flat, a);
    if (s == TWO_LEVEL)
        return two_level_lookup(&st->two, a);
    return memtap_shadow_lookup(t, a);
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

static void reserve_regions(void)
{
    /* spread over the address space: low, around where executables and
     * the heap go, in the middle, and where the kernel puts mappings */
    static const uint64_t hints[REGIONS] = {
        0x10000000ull,     0x4000000000ull,   0x100000000000ull,
        0x300000000000ull, 0x450000000000ull, 0x555500000000ull,
        0x600000000000ull, 0x7e0000000000ull,
    };
    for (int r = 0; r < REGIONS; r++) {
        void *p = mmap((void *)hints[r], REGION_SIZE, PROT_NONE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        region_at[r] = p == MAP_FAILED ? 0 : (uintptr_t)p;
    }
}

/* Every scheme, fed the same streams from two threads, ends with the same
 * counts at every address of a sample. */
static int verify(void)
{
    size_t n = 1 << 16;
    uintptr_t *s = malloc(n * sizeof *s);
    int bad = 0;
    for (int k = 0; k < STREAMS && s; k++) {
        make_stream(s, n, (enum stream_kind)k, 1);
        unsigned want[64];
        for (int e = 0; e < SCHEMES; e++) {
            scheme_state st;
            if (scheme_open(&st, (enum scheme)e) != 0)
                return 1;
            bench_ctx ctx[2] = { { (enum scheme)e, &st.flat, &st.two, st.umbra, s, n },
                                 { (enum scheme)e, &st.flat, &st.two, st.umbra, s, n } };
            run_stream(&ctx[0]);
            run_stream(&ctx[1]);
            memtap_shadow_thread *t =
                st.umbra ? memtap_shadow_thread_begin(st.umbra) : NULL;
            for (int i = 0; i < 64; i++) {
                unsigned got = *scheme_lookup(&st, (enum scheme)e, t,
                                              s[(size_t)i * 997 % n]);
                if (e == 0)
                    want[i] = got;
                else if (got != want[i]) {
                    fprintf(stderr, "%s, %s: count %u at sample %d, flat hash "
                                    "has %u\n", stream_name[k], scheme_name[e],
                            got, i, want[i]);
                    bad = 1;
                }
            }
            memtap_shadow_thread_end(t);
            scheme_close(&st, (enum scheme)e);
        }
    }
    free(s);
    if (!bad)
        printf("all %d schemes agree on %d streams\n", SCHEMES, STREAMS);
    return bad || !s;
}

int main(int argc, char **argv)
{
    reserve_regions();
    for (int r = 0; r < REGIONS; r++)
        if (!region_at[r]) {
            fprintf(stderr, "shadow_bench: cannot reserve the regions\n");
            return 1;
        }
    if (argc > 1 && strcmp(argv[1], "--verify") == 0)
        return verify();
    int runs = argc > 1 ? atoi(argv[1]) : 5;
    size_t n = argc > 2 ? (size_t)atol(argv[2]) : 4u << 20;
    if (runs < 1 || n < 1024)
        return 2;
    uintptr_t *streams[2];
    for (int k = 0; k < 2; k++)
        streams[k] = malloc(n * sizeof(uintptr_t));
    printf("shadow lookups, 1B-to-1B, %d regions x %llu MiB over the 47-bit "
           "space; %zu lookups per thread per run; median of %d runs\n\n",
           REGIONS, REGION_SIZE >> 20, n, runs);
    printf("%-10s %-20s %12s %12s %12s\n", "stream", "scheme", "ns (1 thr)",
           "ns (2 thr)", "memory MiB");
    for (int k = 0; k < STREAMS; k++) {
        for (int t = 0; t < 2; t++)
            make_stream(streams[t], n, (enum stream_kind)k, (uint64_t)t + 1);
        for (int e = 0; e < SCHEMES; e++) {
            double ns[2];
            scheme_state st;
            if (scheme_open(&st, (enum scheme)e) != 0) {
                fprintf(stderr, "shadow_bench: %s: cannot set up\n",
                        scheme_name[e]);
                return 1;
            }
            for (int threads = 1; threads <= 2; threads++) {
                bench_ctx ctx[2];
                for (int t = 0; t < 2; t++)
                    ctx[t] = (bench_ctx){ (enum scheme)e, &st.flat, &st.two,
                                          st.umbra, streams[t], n };
                timed(ctx, threads); /* warm-up: shadow pages, caches */
                double v[64];
                for (int r = 0; r < runs && r < 64; r++)
                    v[r] = timed(ctx, threads);
                qsort(v, (size_t)(runs < 64 ? runs : 64), sizeof *v, cmp_double);
                ns[threads - 1] = v[(runs < 64 ? runs : 64) / 2];
            }
            printf("%-10s %-20s %12.2f %12.2f %12.1f\n", stream_name[k],
                   scheme_name[e], ns[0], ns[1],
                   (double)scheme_memory(&st, (enum scheme)e) / 1048576.0);
            fflush(stdout);
            scheme_close(&st, (enum scheme)e);
        }
    }
    for (int k = 0; k < 2; k++)
        free(streams[k]);
    return 0;
}
