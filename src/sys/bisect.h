/*
 * sys/bisect.h - binary search over an array of structs sorted by a
 * 64-bit address field: the one search of "what starts at or before this
 * address" that symbols, sections, variables and regions share.
 */
#ifndef MEMTAP_SYS_BISECT_H
#define MEMTAP_SYS_BISECT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* How many of the n elements at base (stride bytes apart, sorted by the
 * uint64_t at byte key_off of each) have a key <= addr: the index just
 * after the last of them. */
static inline size_t bisect_after(const void *base, size_t n, size_t stride,
                                  size_t key_off, uint64_t addr)
{
    const char *b = base;
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint64_t key;
        memcpy(&key, b + mid * stride + key_off, sizeof key);
        if (key <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* bisect_after over an array a of n structs with the uint64_t member
 * field. */
#define BISECT_AFTER(a, n, field, addr) \
    bisect_after((a), (n), sizeof *(a), offsetof(__typeof__(*(a)), field), (addr))

#endif
