/*
 * name_cache.h - the last ids given to names, in a fixed number of slots
 * (direct-mapped by hash): the database exports give each object and
 * function name an id, and a trace can name millions of heap blocks, so
 * what they keep in memory is bounded; a miss goes to the database.
 */
#ifndef MEMTAP_REPORT_NAME_CACHE_H
#define MEMTAP_REPORT_NAME_CACHE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sys/hash.h"

#define NAME_CACHE_SLOTS 4096u

typedef struct name_cache {
    struct { char *name; int64_t id; } slot[NAME_CACHE_SLOTS];
} name_cache;

static inline size_t name_cache_slot(const char *name)
{
    return fnv1a64_str(FNV64_OFFSET, name) % NAME_CACHE_SLOTS;
}

/* The id kept for name, or -1. */
static inline int64_t name_cache_get(const name_cache *c, const char *name)
{
    size_t i = name_cache_slot(name);
    return c->slot[i].name && strcmp(c->slot[i].name, name) == 0
               ? c->slot[i].id : -1;
}

/* Keeps name -> id in its slot (the name copied; nothing kept when out of
 * memory: the next lookup misses). */
static inline void name_cache_put(name_cache *c, const char *name, int64_t id)
{
    size_t i = name_cache_slot(name);
    char *copy = strdup(name);
    if (!copy)
        return;
    free(c->slot[i].name);
    c->slot[i].name = copy;
    c->slot[i].id = id;
}

static inline void name_cache_free(name_cache *c)
{
    for (size_t i = 0; i < NAME_CACHE_SLOTS; i++)
        free(c->slot[i].name);
}

#endif
