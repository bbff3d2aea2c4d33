/*
 * index.c - the open-addressing indexes of index.h: linear probing in a
 * power-of-two table kept at most half full.
 */
#include "report/index.h"
#include "sys/hash.h"

#include <stdlib.h>
#include <string.h>

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

static uint64_t hash_str(const char *s)
{
    return fnv1a64_str(FNV64_OFFSET, s);
}

static size_t probe(const index_map *m, uint64_t key, const char *str)
{
    size_t mask = m->cap - 1, j = mix(key) & mask;
    while (m->v[j].used && (m->v[j].key != key ||
                            (str && strcmp(m->v[j].str, str) != 0)))
        j = (j + 1) & mask;
    return j;
}

static int grow(index_map *m)
{
    index_map bigger = { calloc(m->cap ? 2 * m->cap : 1024, sizeof(index_slot)),
                         m->n, m->cap ? 2 * m->cap : 1024 };
    if (!bigger.v)
        return -1;
    for (size_t i = 0; i < m->cap; i++)
        if (m->v[i].used)
            bigger.v[probe(&bigger, m->v[i].key, m->v[i].str)] = m->v[i];
    free(m->v);
    *m = bigger;
    return 0;
}

static int64_t get(const index_map *m, uint64_t key, const char *str)
{
    if (!m->cap)
        return -1;
    const index_slot *s = &m->v[probe(m, key, str)];
    return s->used ? (int64_t)s->value : -1;
}

static int put(index_map *m, uint64_t key, const char *str, uint32_t value)
{
    if ((m->n + 1) * 2 > m->cap && grow(m) != 0)
        return -1;
    index_slot *s = &m->v[probe(m, key, str)];
    if (!s->used) {
        char *copy = str ? strdup(str) : NULL;
        if (str && !copy)
            return -1;
        s->key = key;
        s->str = copy;
        s->used = 1;
        m->n++;
    }
    s->value = value;
    return 0;
}

int64_t index_get(const index_map *m, uint64_t key) { return get(m, key, NULL); }

uint32_t *index_value(index_map *m, uint64_t key, int *made)
{
    if ((m->n + 1) * 2 > m->cap && grow(m) != 0)
        return NULL;
    index_slot *s = &m->v[probe(m, key, NULL)];
    *made = !s->used;
    if (!s->used) {
        s->key = key;
        s->str = NULL;
        s->value = 0;
        s->used = 1;
        m->n++;
    }
    return &s->value;
}

int index_put(index_map *m, uint64_t key, uint32_t value)
{
    return put(m, key, NULL, value);
}

int64_t index_get_str(const index_map *m, const char *key)
{
    return get(m, hash_str(key), key);
}

int index_put_str(index_map *m, const char *key, uint32_t value)
{
    return put(m, hash_str(key), key, value);
}

void index_free(index_map *m)
{
    for (size_t i = 0; i < m->cap; i++)
        free(m->v[i].str);
    free(m->v);
    m->v = NULL;
    m->n = m->cap = 0;
}
