/*
 * sys/utf8.h - UTF-8 as the outputs that must be valid UTF-8 check it
 * (JSON strings, the Parquet export's names): a path or name of the
 * program's may hold any bytes.
 */
#ifndef MEMTAP_SYS_UTF8_H
#define MEMTAP_SYS_UTF8_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* U+FFFD, what a byte that is not part of a UTF-8 character becomes. */
#define UTF8_REPLACEMENT "\xef\xbf\xbd"

/* The length of the UTF-8 character of 2 to 4 bytes at s, or 0 when the
 * bytes are not one (RFC 3629: no overlong forms, no surrogates, none
 * past U+10FFFF; a NUL ends the bytes). */
static inline int utf8_char(const unsigned char *s)
{
    static const struct { unsigned char mask, lead; int n; uint32_t min; } forms[] = {
        { 0xe0, 0xc0, 2, 0x80 }, { 0xf0, 0xe0, 3, 0x800 }, { 0xf8, 0xf0, 4, 0x10000 },
    };
    for (size_t f = 0; f < sizeof forms / sizeof *forms; f++) {
        if ((s[0] & forms[f].mask) != forms[f].lead)
            continue;
        uint32_t cp = s[0] & (uint32_t)(~forms[f].mask & 0xff);
        for (int i = 1; i < forms[f].n; i++) {
            if ((s[i] & 0xc0) != 0x80)
                return 0;
            cp = cp << 6 | (s[i] & 0x3fu);
        }
        return cp >= forms[f].min && cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff)
                   ? forms[f].n : 0;
    }
    return 0;
}

/* Whether the n bytes at s are all ASCII (eight at a time). */
static inline int utf8_ascii(const char *s, size_t n)
{
    uint64_t high = 0;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        high |= w;
    }
    for (; i < n; i++)
        high |= (unsigned char)s[i];
    return !(high & 0x8080808080808080ull);
}

/* The n bytes at s (a NUL-terminated string) as valid UTF-8 into out
 * (room for 3 * n bytes): its characters kept, any other byte U+FFFD;
 * returns the bytes written. */
static inline size_t utf8_sanitize(const char *s, size_t n, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        int k = c < 0x80 ? 1 : utf8_char((const unsigned char *)s + i);
        if (k) {
            memcpy(out + o, s + i, (size_t)k);
            o += (size_t)k;
            i += (size_t)k;
        } else {
            memcpy(out + o, UTF8_REPLACEMENT, 3);
            o += 3;
            i++;
        }
    }
    return o;
}

#endif
