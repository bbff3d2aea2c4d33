/*
 * vec.h - a growable array of fixed-size elements for the static engine's
 * builders (candidates, blocks, instructions, expressions).
 */
#ifndef MEMTAP_ANALYSIS_VEC_H
#define MEMTAP_ANALYSIS_VEC_H

#include <stdlib.h>
#include <string.h>

typedef struct vec {
    void *v;
    size_t n, cap, elem;
} vec;

/* A new zeroed element at the end, or NULL when out of memory. */
static inline void *vec_push(vec *x)
{
    if (x->n == x->cap) {
        size_t cap = x->cap ? x->cap * 2 : 256;
        void *v = realloc(x->v, cap * x->elem);
        if (!v)
            return NULL;
        x->v = v;
        x->cap = cap;
    }
    void *e = (char *)x->v + x->elem * x->n++;
    memset(e, 0, x->elem);
    return e;
}

#endif
