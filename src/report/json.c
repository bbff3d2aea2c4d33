/*
 * json.c - JSON strings and addresses (json.h).
 */
#include "report/json.h"

#include <inttypes.h>

void json_str(FILE *o, const char *s)
{
    fputc('"', o);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(o, "\\%c", c);
        else if (c < 0x20 || c == '<')
            fprintf(o, "\\u%04x", c);
        else
            fputc(c, o);
    }
    fputc('"', o);
}

void json_addr(FILE *o, const char *key, uint64_t addr)
{
    fprintf(o, "\"%s\": \"0x%" PRIx64 "\"", key, addr);
}
