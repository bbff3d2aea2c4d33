/*
 * sys/shebang.h - a script's "#!" line split as the kernel splits it:
 * INTERP up to the first blank, ARG the rest with the blanks around it cut
 * (one argument, inner blanks kept).  No libc: the exec emulation inside
 * traced processes uses it as the memtap command does.
 */
#ifndef MEMTAP_SYS_SHEBANG_H
#define MEMTAP_SYS_SHEBANG_H

#include <stddef.h>

/* line: the text after "#!", its newline already cut; changed in place.
 * *name is INTERP (empty when there is none: then -1), *arg ARG or NULL;
 * 0 otherwise. */
static inline int shebang_split(char *line, char **name, char **arg)
{
    char *p = line;
    while (*p == ' ' || *p == '\t')
        p++;
    *name = p;
    while (*p && *p != ' ' && *p != '\t')
        p++;
    *arg = NULL;
    if (p == *name)
        return -1;
    if (!*p)
        return 0;
    *p++ = '\0';
    while (*p == ' ' || *p == '\t')
        p++;
    char *end = p;
    for (char *q = p; *q; q++)
        if (*q != ' ' && *q != '\t')
            end = q + 1;
    *end = '\0';
    if (*p)
        *arg = p;
    return 0;
}

#endif
