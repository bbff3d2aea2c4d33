/*
 * line_buf.c - the buffer of hand-built lines (line_buf.h) and what its
 * inline helpers share.
 */
#include "line_buf.h"

#include <stdlib.h>

const char line_dec_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233"
    "34353637383940414243444546474849505152535455565758596061626364656667"
    "6869707172737475767778798081828384858687888990919293949596979899";

/* The two hex digits of every byte. */
const char line_hex_pairs[513] =
    "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
    "202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
    "404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
    "606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
    "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
    "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
    "c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf"
    "e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";

int line_buf_init(line_buf *w, FILE *out)
{
    w->out = out;
    w->used = 0;
    w->buf = malloc(LINE_BUF_SIZE);
    return w->buf ? 0 : -1;
}

void line_buf_flush(line_buf *w)
{
    if (w->used)
        fwrite_unlocked(w->buf, 1, w->used, w->out);
    w->used = 0;
}

void line_buf_free(line_buf *w)
{
    if (w->buf)
        line_buf_flush(w);
    free(w->buf);
    w->buf = NULL;
}

/* Out of line, so that the copy is libc's memcpy: for a copy it knows is
 * bounded GCC inlines a string instruction, slow to start on short names
 * (a sixth of show's time). */
void put_n(line *l, const char *s, size_t len)
{
    if (len > LINE_MAX_LEN - l->n)
        len = LINE_MAX_LEN - l->n;
    memcpy(l->b + l->n, s, len);
    l->n += len;
}
