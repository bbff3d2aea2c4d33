/*
 * json.c - JSON strings and addresses (json.h).
 */
#include "report/json.h"

#include <inttypes.h>

/* The length of the UTF-8 character at s (2 to 4 bytes), or 0 when the
 * bytes are not one (RFC 3629: no overlong forms, no surrogates, none
 * past U+10FFFF). */
static int utf8_char(const unsigned char *s)
{
    static const struct { unsigned char mask, lead; int n; uint32_t min; } forms[] = {
        { 0xe0, 0xc0, 2, 0x80 }, { 0xf0, 0xe0, 3, 0x800 }, { 0xf8, 0xf0, 4, 0x10000 },
    };
    for (size_t f = 0; f < sizeof forms / sizeof *forms; f++) {
        if ((s[0] & forms[f].mask) != forms[f].lead)
            continue;
        uint32_t cp = s[0] & (uint32_t)(~forms[f].mask & 0xff);
        for (int i = 1; i < forms[f].n; i++) {
            if ((s[i] & 0xc0) != 0x80) /* (a NUL ends it too) */
                return 0;
            cp = cp << 6 | (s[i] & 0x3fu);
        }
        return cp >= forms[f].min && cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff)
                   ? forms[f].n : 0;
    }
    return 0;
}

void json_str(FILE *o, const char *s)
{
    fputc('"', o);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        int n;
        if (c == '"' || c == '\\') {
            fprintf(o, "\\%c", c);
        } else if (c < 0x20 || c == '<') {
            fprintf(o, "\\u%04x", c);
        } else if (c < 0x80) {
            fputc(c, o);
        } else if ((n = utf8_char((const unsigned char *)s)) != 0) {
            fwrite(s, 1, (size_t)n, o);
            s += n - 1;
        } else {
            fputs("\\ufffd", o);
        }
    }
    fputc('"', o);
}

void json_addr(FILE *o, const char *key, uint64_t addr)
{
    fprintf(o, "\"%s\": \"0x%" PRIx64 "\"", key, addr);
}

void json_str_or_null(FILE *o, const char *key, const char *s)
{
    fprintf(o, "\"%s\": ", key);
    if (s)
        json_str(o, s);
    else
        fputs("null", o);
}
