/*
 * line_buf.c - the buffer of hand-built lines (line_buf.h) and what its
 * inline helpers share.
 */
#include "line_buf.h"

#include <stdlib.h>

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
char *copy_long(char *d, const char *s, size_t len)
{
    memcpy(d, s, len);
    return d + len;
}

/* " L 0804a010,4\n": at most 41 bytes, written with no look at the room
 * a line has. */
void lackey_line(line_buf *w, char kind, uint64_t addr, uint64_t size)
{
    char *o = line_start(w);
    o[0] = ' ';
    o[1] = kind;
    o[2] = ' ';
    o = hex_at(o + 3, addr, 8);
    *o++ = ',';
    o = dec_at(o, size);
    *o++ = '\n';
    line_end(w, o);
}
