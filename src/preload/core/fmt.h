/*
 * fmt.h - tiny string building for the preload library, which must not use
 * stdio (it may run in signal handlers and must not allocate).
 */
#ifndef MEMTAP_PRELOAD_FMT_H
#define MEMTAP_PRELOAD_FMT_H

#include <stddef.h>
#include <stdint.h>

typedef struct fmt_buf {
    char *p;
    size_t len, cap;
} fmt_buf;

static inline void fmt_char(fmt_buf *b, char c)
{
    if (b->len + 1 < b->cap)
        b->p[b->len++] = c;
    if (b->cap)
        b->p[b->len] = '\0';
}

static inline void fmt_str(fmt_buf *b, const char *s)
{
    while (*s)
        fmt_char(b, *s++);
}

static inline void fmt_base(fmt_buf *b, uint64_t v, unsigned base)
{
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = "0123456789abcdef"[v % base];
        v /= base;
    } while (v);
    while (n)
        fmt_char(b, tmp[--n]);
}

static inline void fmt_u64(fmt_buf *b, uint64_t v) { fmt_base(b, v, 10); }
static inline void fmt_hex(fmt_buf *b, uint64_t v) { fmt_base(b, v, 16); }

#endif
