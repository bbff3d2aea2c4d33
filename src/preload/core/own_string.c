/*
 * own_string.c - libmemtap.so's own string and memory comparisons, hidden
 * (every call libmemtap.so makes to these binds here at link time).  A
 * program may define them itself (every AddressSanitizer program defines
 * memcmp, strlen, ...): called from a signal handler, the program's version
 * touched traced memory, and the fault engine's handler faulted into
 * itself and spun.  Plain byte loops: they run on small inputs (names,
 * paths, instruction bytes), never on the program's data.  memcpy, memset
 * and memmove are libmemtap.so's own exported wrappers.
 */
#include <stddef.h>

#define OWN __attribute__((visibility("hidden")))

OWN size_t strlen(const char *s)
{
    const char *p = s;
    while (*p)
        p++;
    return (size_t)(p - s);
}

OWN size_t strnlen(const char *s, size_t max)
{
    size_t n = 0;
    while (n < max && s[n])
        n++;
    return n;
}

OWN int memcmp(const void *a, const void *b, size_t n)
{
    const unsigned char *x = a, *y = b;
    for (size_t i = 0; i < n; i++)
        if (x[i] != y[i])
            return x[i] < y[i] ? -1 : 1;
    return 0;
}

OWN void *memchr(const void *s, int c, size_t n)
{
    const unsigned char *p = s;
    for (size_t i = 0; i < n; i++)
        if (p[i] == (unsigned char)c)
            return (void *)(p + i);
    return NULL;
}

OWN int strncmp(const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char x = (unsigned char)a[i], y = (unsigned char)b[i];
        if (x != y)
            return x < y ? -1 : 1;
        if (!x)
            return 0;
    }
    return 0;
}

OWN int strcmp(const char *a, const char *b)
{
    return strncmp(a, b, (size_t)-1);
}

OWN char *strchr(const char *s, int c)
{
    for (;; s++) {
        if (*s == (char)c)
            return (char *)s;
        if (!*s)
            return NULL;
    }
}

OWN char *strrchr(const char *s, int c)
{
    const char *last = NULL;
    for (;; s++) {
        if (*s == (char)c)
            last = s;
        if (!*s)
            return (char *)last;
    }
}

OWN size_t strcspn(const char *s, const char *reject)
{
    size_t n = 0;
    while (s[n] && !strchr(reject, s[n]))
        n++;
    return n;
}

OWN void *memmem(const void *hay, size_t hn, const void *needle, size_t nn)
{
    const unsigned char *h = hay;
    if (nn == 0)
        return (void *)h;
    for (size_t i = 0; nn <= hn && i <= hn - nn; i++)
        if (memcmp(h + i, needle, nn) == 0)
            return (void *)(h + i);
    return NULL;
}

OWN char *strstr(const char *hay, const char *needle)
{
    return memmem(hay, strlen(hay), needle, strlen(needle));
}
