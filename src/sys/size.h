/*
 * sys/size.h - sizes as users write them (`memtap export --split`,
 * `memtap cache trim`, MEMTAP_CACHE_MAX): a number of bytes, or with K, M
 * or G (powers of 1024).
 */
#ifndef MEMTAP_SYS_SIZE_H
#define MEMTAP_SYS_SIZE_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/* s as a size into *out; 0, or -1 when it is none (or too large). */
static inline int size_parse(const char *s, uint64_t *out)
{
    if (!(s[0] >= '0' && s[0] <= '9'))
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    unsigned shift = !*end ? 0 : *end == 'K' ? 10 : *end == 'M' ? 20
                   : *end == 'G' ? 30 : 64;
    if (errno || shift == 64 || (*end && end[1]) || v > (UINT64_MAX >> shift))
        return -1;
    *out = (uint64_t)v << shift;
    return 0;
}

#endif
