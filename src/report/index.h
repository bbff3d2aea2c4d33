/*
 * index.h - open-addressing indexes from a key (an integer, or a string
 * the index owns a copy of) to a position in the caller's array: the
 * objects, instructions and threads of a report, found per access.
 */
#ifndef MEMTAP_REPORT_INDEX_H
#define MEMTAP_REPORT_INDEX_H

#include <stddef.h>
#include <stdint.h>

typedef struct index_slot {
    uint64_t key;     /* the integer, or the string's hash */
    char *str;        /* the string key (NULL for an integer index) */
    uint32_t value;
    uint8_t used;
} index_slot;

typedef struct index_map {
    index_slot *v;
    size_t n, cap;
} index_map;

/* The value of an integer key, or -1 when absent. */
int64_t index_get(const index_map *m, uint64_t key);
/* Adds key -> value; 0, or -1 when out of memory. */
int index_put(index_map *m, uint64_t key, uint32_t value);
/* The value of an integer key, made (0, *made set) when absent: one
 * search for a get then a put.  Valid until the next insertion; NULL
 * when out of memory. */
uint32_t *index_value(index_map *m, uint64_t key, int *made);

/* The same for string keys (copied on insertion). */
int64_t index_get_str(const index_map *m, const char *key);
int index_put_str(index_map *m, const char *key, uint32_t value);

void index_free(index_map *m);

#endif
