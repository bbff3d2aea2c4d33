/*
 * json.c - JSON strings and addresses (json.h).
 */
#include "report/json.h"
#include "sys/utf8.h"

#include <inttypes.h>

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
