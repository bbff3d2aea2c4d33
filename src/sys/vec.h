/*
 * sys/vec.h - growable arrays of fixed-size elements: a vec that carries
 * its own element size (the static analysis' builders), and the same
 * growth for arrays whose pointer and count live elsewhere (a report's
 * objects, an export's blocks).  Not for code inside signal handlers: it
 * allocates.
 */
#ifndef MEMTAP_SYS_VEC_H
#define MEMTAP_SYS_VEC_H

#include <stdlib.h>
#include <string.h>

/* A new zeroed element at the end of the array *v of *n elements (room
 * for *cap), grown by doubling; NULL when out of memory. */
static inline void *array_push(void **v, size_t *n, size_t *cap, size_t elem)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 256;
        void *p = realloc(*v, c * elem);
        if (!p)
            return NULL;
        *v = p;
        *cap = c;
    }
    void *e = (char *)*v + elem * (*n)++;
    memset(e, 0, elem);
    return e;
}

typedef struct vec {
    void *v;
    size_t n, cap, elem;
} vec;

/* A new zeroed element at the end, or NULL when out of memory. */
static inline void *vec_push(vec *x)
{
    return array_push(&x->v, &x->n, &x->cap, x->elem);
}

#endif
