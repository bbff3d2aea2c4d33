/*
 * config.c - the MEMTAP_* environment read once (config.h), row by row of
 * sys/run_config.h.  No malloc and no C library: the program's environ
 * is read as it is and the strings are copied into this file's static
 * storage (a program may define getenv, strtol and the like itself; the
 * string functions called here are libmemtap.so's own, own_string.c).
 */
#include "config.h"

#include <stddef.h>
#include <string.h>

extern char **environ;

static run_config cfg;
static int loaded;

/* The value of variable name in the environment, or NULL. */
static const char *value_of(const char *name)
{
    size_t n = strlen(name);
    for (char **e = environ; e && *e; e++)
        if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
            return *e + n + 1;
    return NULL;
}

/* s into buf of cap bytes ("" when it does not fit); 0, or -1 when it
 * did not. */
static int copy(char *buf, size_t cap, const char *s)
{
    size_t n = strlen(s);
    if (n >= cap) {
        buf[0] = '\0';
        return -1;
    }
    for (size_t i = 0; i <= n; i++)
        buf[i] = s[i];
    return 0;
}

/* A decimal number, as strtol reads one (sign, digits up to the first
 * other character). */
static long decimal(const char *s)
{
    int neg = *s == '-';
    s += neg || *s == '+';
    long n = 0;
    while (*s >= '0' && *s <= '9')
        n = n * 10 + (*s++ - '0');
    return neg ? -n : n;
}

/* The index of v among the '|'-separated words, or 0. */
static int word_index(const char *words, const char *v)
{
    size_t len = strlen(v);
    for (int i = 0;; i++) {
        size_t w = strcspn(words, "|");
        if (w == len && strncmp(words, v, len) == 0)
            return i;
        if (!words[w])
            return 0;
        words += w + 1;
    }
}

#define DECODE_TEXT(f, v, a, b) copy(cfg.f, sizeof cfg.f, v ? v : "");
#define DECODE_LIST(f, v, a, b) \
    cfg.f = v && copy(cfg.f##_text, sizeof cfg.f##_text, v) == 0 ? cfg.f##_text : NULL;
#define DECODE_FLAG(f, v, a, b) cfg.f = v && v[0] == '1' && v[1] == '\0';
#define DECODE_LEAD1(f, v, a, b) cfg.f = v && v[0] == '1';
#define DECODE_SET(f, v, a, b) cfg.f = v != NULL;
#define DECODE_NUM(f, v, a, b)                                         \
    {                                                                  \
        long n_ = v && *v ? decimal(v) : 0;                            \
        cfg.f = n_ >= (long)(a) && n_ <= (long)(b) ? (uint32_t)n_ : 0; \
    }
#define DECODE_FD(f, v, a, b) cfg.f = v && *v ? (int)decimal(v) : -1;
#define DECODE_SIZE(f, v, a, b) cfg.f = v && *v ? (int64_t)decimal(v) : -1;
#define DECODE_WORDS(f, v, a, b) cfg.f = v ? word_index(a, v) : 0;
#define DECODE(kind, f, env, a, b)             \
    {                                          \
        const char *v_ = value_of(env);        \
        DECODE_##kind(f, v_, a, b)             \
    }

static void load(void)
{
    RUN_CONFIG_ROWS(DECODE)
}

const preload_config *config(void)
{
    if (!loaded) {
        load();
        loaded = 1;
    }
    return &cfg;
}
