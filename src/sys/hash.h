/*
 * sys/hash.h - the small hashes memtap uses in several places: FNV-1a
 * (64-bit and 32-bit) over bytes and strings, and Fibonacci hashing of
 * integers (the golden-ratio multiplier) for direct-mapped caches and
 * open addressing.  Header-only and free of libc calls: code inside
 * traced processes (signal handlers included) uses it too.
 */
#ifndef MEMTAP_SYS_HASH_H
#define MEMTAP_SYS_HASH_H

#include <stddef.h>
#include <stdint.h>

#define FNV64_OFFSET 0xcbf29ce484222325ull
#define FNV32_OFFSET 2166136261u

static inline uint64_t fnv1a64(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

static inline uint64_t fnv1a64_str(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

static inline uint32_t fnv1a32(uint32_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 16777619u;
    return h;
}

/* The top bits of x times 2^64 / golden ratio: well spread for keys
 * that differ in their low bits (addresses, thread ids). */
static inline uint64_t fib_mix(uint64_t x)
{
    return x * 0x9E3779B97F4A7C15ull;
}

/* The top bits (1 to 63) of fib_mix(x). */
static inline uint64_t fib_hash(uint64_t x, unsigned bits)
{
    return fib_mix(x) >> (64 - bits);
}

#endif
