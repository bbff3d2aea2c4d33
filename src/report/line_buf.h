/*
 * line_buf.h - text lines built by hand, in place in a large buffer, and
 * written to a stream in large pieces (line_buf.c): the access lines are
 * most of what show and export print, and printf's format parsing was
 * most of their time.  The *_at helpers are inline, the inner loop of
 * both: each writes at a pointer and returns the end, with no look at the
 * room left, so a line's writer bounds what it writes by LINE_MAX_LEN
 * (with a line's length in memory, the compiler reloaded and stored it
 * around every byte store, which may alias it).
 */
#ifndef MEMTAP_REPORT_LINE_BUF_H
#define MEMTAP_REPORT_LINE_BUF_H

#include "symbols/symbolizer.h"

#include <emmintrin.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define LINE_NAME_MAX 1024u                      /* one name in a line */
#define LINE_MAX_LEN (3 * LINE_NAME_MAX + 64)    /* three names and the rest */
#define LINE_BUF_SIZE (256u << 10)

typedef struct line_buf {
    FILE *out;
    char *buf;
    size_t used;
} line_buf;

/* 0, or -1 when out of memory. */
int line_buf_init(line_buf *w, FILE *out);
/* Writes what is buffered: before anything else is written to out. */
void line_buf_flush(line_buf *w);
/* Flushes and frees the buffer. */
void line_buf_free(line_buf *w);


/* Where the next line goes, with LINE_MAX_LEN bytes of room (what is
 * buffered is written first when there is less). */
static inline char *line_start(line_buf *w)
{
    if (LINE_BUF_SIZE - w->used < LINE_MAX_LEN)
        line_buf_flush(w);
    return w->buf + w->used;
}

/* Ends the line begun at line_start() at end. */
static inline void line_end(line_buf *w, const char *end)
{
    w->used = (size_t)(end - w->buf);
}

/* copy_at of more than 32 bytes (see line_buf.c). */
char *copy_long(char *d, const char *s, size_t len);

/* len bytes of s at d; returns the end.  Up to 32 bytes, two copies of a
 * fixed size that overlap as needed (each one load and one store, none
 * past the name's end); longer ones by libc's memcpy. */
static inline char *copy_at(char *d, const char *s, size_t len)
{
    if (len > 32)
        return copy_long(d, s, len);
    if (len >= 16) {
        memcpy(d, s, 16);
        memcpy(d + len - 16, s + len - 16, 16);
    } else if (len >= 8) {
        memcpy(d, s, 8);
        memcpy(d + len - 8, s + len - 8, 8);
    } else if (len >= 4) {
        memcpy(d, s, 4);
        memcpy(d + len - 4, s + len - 4, 4);
    } else {
        for (size_t i = 0; i < len; i++)
            d[i] = s[i];
    }
    return d + len;
}

/* A name at d, cut to LINE_NAME_MAX bytes (a line has room for three);
 * returns the end. */
static inline char *name_at(char *d, const char *s, size_t len)
{
    return copy_at(d, s, len < LINE_NAME_MAX ? len : LINE_NAME_MAX);
}

/* v in decimal at p (20 bytes of room); returns the end. */
static inline char *dec_at(char *p, uint64_t v)
{
    static const uint64_t tens[20] = {
        1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull,
        10000000ull, 100000000ull, 1000000000ull, 10000000000ull,
        100000000000ull, 1000000000000ull, 10000000000000ull,
        100000000000000ull, 1000000000000000ull, 10000000000000000ull,
        100000000000000000ull, 1000000000000000000ull,
        10000000000000000000ull,
    };
    /* the digits from the bits (log10(2) ~ 1233 / 4096): t, or one more */
    unsigned t = (unsigned)((64 - __builtin_clzll(v | 1)) * 1233) >> 12;
    unsigned n = t + (v >= tens[t]);
    char *end = p + (n ? n : 1);
    symbolizer_digits(end, v, 10);
    return end;
}

/* v in lowercase hex at p, at least `digits` digits (at most 16): its
 * nibbles spread to bytes and made digits in an SSE2 register, the last
 * n taken as two words and stored whole (16 bytes of room).  Returns the
 * end. */
static inline char *hex_at(char *p, uint64_t v, int digits)
{
    int n = v ? (67 - __builtin_clzll(v)) / 4 : 1;
    if (n < digits)
        n = digits;
    __m128i x = _mm_cvtsi64_si128((long long)__builtin_bswap64(v));
    __m128i low4 = _mm_set1_epi8(0x0f);
    __m128i nib = _mm_unpacklo_epi8(_mm_and_si128(_mm_srli_epi16(x, 4), low4),
                                    _mm_and_si128(x, low4));
    __m128i letter = _mm_and_si128(_mm_cmpgt_epi8(nib, _mm_set1_epi8(9)),
                                   _mm_set1_epi8('a' - '0' - 10));
    __m128i text = _mm_add_epi8(_mm_add_epi8(nib, _mm_set1_epi8('0')), letter);
    uint64_t hi = (uint64_t)_mm_cvtsi128_si64(text);
    uint64_t lo = (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(text, text));
    if (n > 8) {
        hi >>= 8 * (16 - n); /* its last n - 8 digits */
        memcpy(p, &hi, 8);
        memcpy(p + n - 8, &lo, 8);
    } else {
        lo >>= 8 * (8 - n);
        memcpy(p, &lo, 8);
    }
    return p + n;
}

/* One of Valgrind Lackey's data lines, " L 0804a010,4" (kind L, S or
 * M): what show --format lackey and export --format lackey print. */
void lackey_line(line_buf *w, char kind, uint64_t addr, uint64_t size);

#endif
