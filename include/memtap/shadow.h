/*
 * memtap/shadow.h - shadow memory: metadata for every application address,
 * found in constant time (the Umbra scheme).
 *
 * How it maps
 * -----------
 * The 64-bit address space is seen as units of 4 GiB.  A unit that holds
 * application memory gets shadow reserved for it (one contiguous range,
 * sized by the client's scale), and an entry in the space's global mapping
 * table: {base of the unit, offset}.  A shadow address is then
 *
 *     shadow = ((addr >> shr) << shl) + offset          (Umbra, eq. 2)
 *
 * so the table grows with the units the program uses (a few), never with
 * the size of the address space.  Shadow is reserved with MAP_NORESERVE
 * and the kernel supplies pages on first write: shadow of memory nobody
 * touched costs nothing.  Units are registered when the host reports a
 * mapping, or on the first lookup of an address in them.  An application
 * mapping that lands on shadow (MAP_FIXED) moves the shadow away first
 * (memtap_shadow_make_room), and adjacent application units get adjacent
 * shadow, so an access straddling two units finds its metadata contiguous.
 *
 * Lookups go through the caches of the paper, fastest first: a reference
 * cache the caller keeps per instruction or per group of instructions
 * (O4, O6), the thread's last unit (O3), its lookup hashtable (O2) and its
 * private copy of the mapping table (O1); only a miss in all of them reads
 * the global table.  The global table is append-only and published with
 * release/acquire, so no lookup takes a lock.  Moving shadow (rare) bumps a
 * generation that every cache checks; the host must keep other threads out
 * of lookups while it happens (the paper suspends them).
 *
 * Everything here is safe inside a traced process: memory comes straight
 * from the kernel, never from malloc; lookups never lock, so they may run
 * in signal handlers.
 */
#ifndef MEMTAP_SHADOW_H
#define MEMTAP_SHADOW_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MEMTAP_SHADOW_UNIT_SHIFT 32 /* 4 GiB application units */
#define MEMTAP_SHADOW_MAX_UNITS 1024

typedef struct memtap_shadow memtap_shadow;
typedef struct memtap_shadow_thread memtap_shadow_thread;

/* Which caches lookups use (all by default; benchmarks turn them off to
 * measure each one, as the paper's Figure 5 does). */
enum memtap_shadow_cache {
    MEMTAP_SHADOW_O1 = 1u << 0,  /* thread-private mapping table */
    MEMTAP_SHADOW_O2 = 1u << 1,  /* lookup hashtable */
    MEMTAP_SHADOW_O3 = 1u << 2,  /* last-unit memo */
    MEMTAP_SHADOW_ALL_CACHES = 7u,
    MEMTAP_SHADOW_NO_CACHE = 1u << 8, /* none: every lookup walks the
                                         global table */
};

/*
 * What a client asks for (in the spirit of umbra_client_t).  app_bytes
 * bytes of application memory have shadow_bits bits of metadata; both are
 * powers of two: 1B-to-1B is {1, 8}, 1B-to-4B {1, 32}, 4B-to-1B {4, 8},
 * 1B-to-2b {1, 2}, 64B-to-8B {64, 64}.  A shadow unit smaller than a byte
 * is addressed as a byte plus a bit position (memtap_shadow_bit).
 *
 * The callbacks may be NULL.  create/remove run when shadow for the
 * application range [lo, hi) is set up or is about to be released (lo, hi
 * within one unit; shadow is the metadata of lo); thread_begin/thread_end
 * run in the thread itself.
 */
typedef struct memtap_shadow_client {
    uint32_t app_bytes;
    uint32_t shadow_bits;
    uint32_t caches;             /* enum memtap_shadow_cache; 0 = all */
    void *user;
    void (*create)(void *user, uintptr_t lo, uintptr_t hi, void *shadow);
    void (*remove)(void *user, uintptr_t lo, uintptr_t hi, void *shadow);
    void (*thread_begin)(void *user, memtap_shadow_thread *t);
    void (*thread_end)(void *user, memtap_shadow_thread *t);
} memtap_shadow_client;

/* Per-thread state; the fields after `user` are the library's. */
struct memtap_shadow_thread {
    void *user;                  /* the client's, per thread */
    uint32_t index;              /* 0, 1, 2, ... in order of creation */
    uint32_t reserved;
};

/* A reference cache: the unit an instruction (or a group of instructions
 * known to touch the same unit) used last, and its translation.  Zero it
 * (or use MEMTAP_SHADOW_REF_INIT) before first use. */
typedef struct memtap_shadow_ref {
    uintptr_t base;              /* unit-aligned application address + 1
                                    while empty, so that nothing matches */
    intptr_t offset;
    uint64_t gen;
} memtap_shadow_ref;

#define MEMTAP_SHADOW_REF_INIT { 1, 0, 0 }

/* Counters of where lookups were answered (per thread, summed). */
typedef struct memtap_shadow_stats {
    uint64_t ref_fills;              /* O4/O6 misses (hits are not
                                        counted: they must stay cheap) */
    uint64_t last_hits;              /* O3 */
    uint64_t hash_hits;              /* O2 */
    uint64_t private_hits;           /* O1 */
    uint64_t global_walks;           /* answered by the global table */
    uint64_t units_registered;       /* units created (map or first use) */
    uint64_t relocations;            /* shadow moved out of the way */
    uint64_t units;                  /* application units now */
    uint64_t table_bytes;            /* global table and thread caches */
    uint64_t shadow_reserved;        /* bytes of shadow address space */
} memtap_shadow_stats;

/* Status codes (negative, as everywhere in memtap's libraries). */
enum memtap_shadow_status {
    MEMTAP_SHADOW_OK = 0,
    MEMTAP_SHADOW_E_INVALID = -1,    /* sizes not powers of two, range bad */
    MEMTAP_SHADOW_E_NOMEM = -2,      /* the kernel refused memory */
    MEMTAP_SHADOW_E_FULL = -3,       /* MEMTAP_SHADOW_MAX_UNITS reached */
};

/* Creates a shadow space for the client (copied).  Returns a status. */
int memtap_shadow_create(const memtap_shadow_client *client,
                         memtap_shadow **out);
/* Releases the space and all its shadow (no remove callbacks). */
void memtap_shadow_destroy(memtap_shadow *s);

/* Thread state for the calling thread (thread_begin runs), and its end
 * (thread_end runs; the state is reused by a later thread). */
memtap_shadow_thread *memtap_shadow_thread_begin(memtap_shadow *s);
void memtap_shadow_thread_end(memtap_shadow_thread *t);

/* ---- keeping the mapping current (the host reports the program's memory
 * calls; none of these may run concurrently with lookups of the range) ---- */

/* [addr, addr+len) is application memory now: registers its units and
 * calls create.  Moves shadow out of the range first if it is there. */
int memtap_shadow_app_map(memtap_shadow *s, uintptr_t addr, size_t len);
/* [addr, addr+len) is gone: calls remove, then releases its shadow (its
 * metadata reads as zero afterwards).  Units stay registered (Umbra 3.3). */
void memtap_shadow_app_unmap(memtap_shadow *s, uintptr_t addr, size_t len);
/* mremap: the metadata of the first min(old_len, new_len) bytes moves with
 * the data; a dropped tail is removed as by app_unmap. */
int memtap_shadow_app_move(memtap_shadow *s, uintptr_t old, size_t old_len,
                           uintptr_t new_addr, size_t new_len);
/* Before a MAP_FIXED mapping of [addr, addr+len): moves any shadow of this
 * space that lies there elsewhere.  Returns a status. */
int memtap_shadow_make_room(memtap_shadow *s, uintptr_t addr, size_t len);
/* Zeroes all metadata (its pages go back to the kernel); no callbacks. */
void memtap_shadow_clear(memtap_shadow *s);
/* Whether addr lies in shadow reserved by this space. */
int memtap_shadow_is_shadow(const memtap_shadow *s, uintptr_t addr);

/* ---- lookups ---- */

/* The shadow of addr (for sub-byte shadow: the byte holding its bits),
 * registering addr's unit on first use; NULL only when no unit can be had
 * (the table is full or the kernel refused memory). */
void *memtap_shadow_lookup(memtap_shadow_thread *t, uintptr_t addr);

/* Bit position of addr's metadata within its shadow byte (0 unless the
 * client's shadow unit is smaller than a byte). */
unsigned memtap_shadow_bit(const memtap_shadow *s, uintptr_t addr);

/* The slow half of memtap_shadow_ref_lookup: fills *ref for addr's unit. */
void *memtap_shadow_ref_fill(memtap_shadow_thread *t, memtap_shadow_ref *ref,
                             uintptr_t addr);

/* Library-private view used by the inline lookup below. */
struct memtap_shadow_fast {
    uint32_t shr, shl;
    uint64_t gen;
};
const struct memtap_shadow_fast *memtap_shadow_fast_of(const memtap_shadow *s);

/* Lookup through a reference cache (O4; shared by a group of instructions
 * it is O6): one compare when the unit is the one the cache saw last. */
static inline void *memtap_shadow_ref_lookup(memtap_shadow_thread *t,
                                             const struct memtap_shadow_fast *f,
                                             memtap_shadow_ref *ref,
                                             uintptr_t addr)
{
    uintptr_t base = addr >> MEMTAP_SHADOW_UNIT_SHIFT
                                << MEMTAP_SHADOW_UNIT_SHIFT;
    if (__builtin_expect(base == ref->base &&
                             ref->gen == __atomic_load_n(&f->gen,
                                                         __ATOMIC_RELAXED),
                         1))
        return (void *)(((addr >> f->shr) << f->shl) + (uintptr_t)ref->offset);
    return memtap_shadow_ref_fill(t, ref, addr);
}

/* Translation with a reference cache that is known to hold addr's unit
 * (the later members of an O6 group, after the first one's lookup). */
static inline void *memtap_shadow_ref_apply(const struct memtap_shadow_fast *f,
                                            const memtap_shadow_ref *ref,
                                            uintptr_t addr)
{
    return (void *)(((addr >> f->shr) << f->shl) + (uintptr_t)ref->offset);
}

/* ---- walking the metadata ---- */

/* Calls fn for every run of application addresses [lo, hi) whose shadow
 * pages the kernel has supplied (metadata elsewhere is all zero), in
 * address order; shadow is the metadata of lo.  Stops when fn returns
 * non-zero and returns that value. */
int memtap_shadow_each_resident(memtap_shadow *s,
                                int (*fn)(void *arg, uintptr_t lo,
                                          uintptr_t hi, void *shadow),
                                void *arg);

/* Bytes of shadow the kernel has supplied pages for (mincore). */
uint64_t memtap_shadow_resident_bytes(memtap_shadow *s);

/* Sums the thread counters into *out (racy but monotonic while threads
 * run) and fills the space-wide figures. */
void memtap_shadow_get_stats(const memtap_shadow *s, memtap_shadow_stats *out);

#ifdef __cplusplus
}
#endif
#endif
