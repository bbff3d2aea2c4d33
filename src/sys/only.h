/*
 * sys/only.h - the --only list (MEMTAP_ONLY): "heap", "static", "stack",
 * comma-separated.  Read by the command and by libmemtap.so alike.
 */
#ifndef MEMTAP_SYS_ONLY_H
#define MEMTAP_SYS_ONLY_H

enum { ONLY_HEAP = 1, ONLY_STATIC = 2, ONLY_STACK = 4, ONLY_ALL = 7 };

/* The ONLY_* bits of the list, or -1 when a word is none of them or the
 * list is empty. */
static inline int only_parse(const char *s)
{
    static const struct { const char *word; int bit; } words[] = {
        { "heap", ONLY_HEAP }, { "static", ONLY_STATIC }, { "stack", ONLY_STACK },
    };
    int keep = 0;
    while (*s) {
        int len = 0, found = 0;
        while (s[len] && s[len] != ',')
            len++;
        for (int i = 0; i < 3 && !found; i++) {
            int k = 0;
            while (k < len && words[i].word[k] == s[k])
                k++;
            if (k == len && !words[i].word[k]) {
                keep |= words[i].bit;
                found = 1;
            }
        }
        if (!found)
            return -1;
        s += len + (s[len] == ',');
    }
    return keep ? keep : -1;
}

#endif
