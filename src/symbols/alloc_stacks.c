/*
 * alloc_stacks.c - heap events' call stacks for the reports
 * (alloc_stacks.h): which frame names a block's site, one key per
 * distinct stack, both cached per stack id in an open-addressing table.
 */
#define _GNU_SOURCE
#include "alloc_stacks.h"

#include "symbolizer.h"
#include "sys/hash.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

/* Functions that only pass an allocation on: the C library's copies of
 * strings, the wrappers of gnulib, GLib, CPython, SQLite and OpenSSL, and
 * the C++ library's containers and allocators. */
static const char *const default_wrappers[] = {
    "strdup", "strndup", "__strdup", "__strndup", "wcsdup",
    "xmalloc", "xcalloc", "xzalloc", "xrealloc", "xnmalloc", "xnrealloc",
    "x2realloc", "x2nrealloc", "xcharalloc", "xmemdup", "xstrdup",
    "xstrndup", "ximalloc", "xizalloc", "xicalloc", "xirealloc",
    "g_malloc*", "g_try_malloc*", "g_realloc*", "g_try_realloc*",
    "g_strdup*", "g_strndup", "g_memdup*", "g_slice_alloc*",
    "PyMem_*", "_PyMem_*", "PyObject_Malloc", "PyObject_Calloc",
    "PyObject_Realloc", "_PyObject_Malloc", "_PyObject_Calloc",
    "_PyObject_Realloc", "_PyObject_ArenaMmap", "pymalloc_*",
    "sqlite3MemMalloc", "sqlite3MemRealloc", "sqlite3Malloc*",
    "sqlite3Realloc", "sqlite3DbMalloc*", "sqlite3DbRealloc*",
    "sqlite3_malloc*", "sqlite3_realloc*",
    "CRYPTO_malloc", "CRYPTO_zalloc", "CRYPTO_realloc", "CRYPTO_clear_realloc",
    "CRYPTO_strdup", "CRYPTO_strndup", "CRYPTO_memdup", "CRYPTO_secure_malloc",
    "CRYPTO_secure_zalloc",
    "operator new*", "std::*", "__gnu_cxx::*",
};

static struct {
    char **v;
    size_t n;
} added;

int alloc_stacks_add_wrapper(const char *pattern)
{
    char **v = realloc(added.v, (added.n + 1) * sizeof *v);
    if (!v)
        return -1;
    added.v = v;
    if (!(v[added.n] = strdup(pattern)))
        return -1;
    added.n++;
    return 0;
}

/* The qualified name of a demangled function without its parameters and
 * return type: "std::vector<int>::_M_realloc_insert<int const&>" of
 * "void std::vector<int>::_M_realloc_insert<int const&>(...)". */
static void qualified_name(const char *function, char *buf, size_t cap)
{
    size_t start = 0, end = strlen(function);
    int depth = 0;
    for (size_t i = 0; function[i]; i++) {
        char c = function[i];
        if (c == '<' || c == '[')
            depth++;
        else if ((c == '>' || c == ']') && depth > 0)
            depth--;
        else if (c == '(' && depth == 0 && i > 0) {
            end = i;
            break;
        } else if (c == ' ' && depth == 0 &&
                   !(i >= 8 && strncmp(function + i - 8, "operator", 8) == 0))
            start = i + 1;
    }
    if (start > end)
        start = 0;
    snprintf(buf, cap, "%.*s", (int)(end - start), function + start);
}

int alloc_stacks_is_wrapper(const char *function)
{
    char name[1024];
    qualified_name(function, name, sizeof name);
    for (size_t i = 0; i < sizeof default_wrappers / sizeof *default_wrappers; i++)
        if (fnmatch(default_wrappers[i], name, 0) == 0)
            return 1;
    for (size_t i = 0; i < added.n; i++)
        if (fnmatch(added.v[i], name, 0) == 0)
            return 1;
    return 0;
}

/* An open-addressing map from nonzero 64-bit keys to 32-bit values. */
typedef struct u64_map {
    struct u64_slot { uint64_t k; uint32_t v; } *slots;
    size_t n, cap;       /* a power of two, at least twice n */
} u64_map;

static struct u64_slot *map_find(const u64_map *m, uint64_t k)
{
    for (size_t i = (size_t)(fib_mix(k) >> 32) & (m->cap - 1);;
         i = (i + 1) & (m->cap - 1))
        if (m->slots[i].k == k || m->slots[i].k == 0)
            return &m->slots[i];
}

static int map_get(const u64_map *m, uint64_t k, uint32_t *v)
{
    const struct u64_slot *s = m->cap ? map_find(m, k) : NULL;
    if (!s || !s->k)
        return 0;
    *v = s->v;
    return 1;
}

static int map_put(u64_map *m, uint64_t k, uint32_t v)
{
    if ((m->n + 1) * 2 > m->cap) {
        u64_map g = { calloc(m->cap ? m->cap * 2 : 256, sizeof *g.slots), m->n,
                      m->cap ? m->cap * 2 : 256 };
        if (!g.slots)
            return -1;
        for (size_t i = 0; i < m->cap; i++)
            if (m->slots[i].k)
                *map_find(&g, m->slots[i].k) = m->slots[i];
        free(m->slots);
        *m = g;
    }
    struct u64_slot *s = map_find(m, k);
    m->n += !s->k;
    *s = (struct u64_slot){ k, v };
    return 0;
}

/* What is known of one stack id. */
typedef struct stack_info {
    uint32_t id, key;
    uint64_t site;       /* 0: not worked out yet */
} stack_info;

struct alloc_stacks {
    const memtap_trace *t;
    symbolizer *sym;
    stack_info *v;
    size_t n, cap;
    u64_map by_id;       /* id -> its info */
    u64_map by_frames;   /* hash of the frames | 1 -> the first id */
};

alloc_stacks *alloc_stacks_create(const memtap_trace *t, symbolizer *sym)
{
    alloc_stacks *a = calloc(1, sizeof *a);
    if (a) {
        a->t = t;
        a->sym = sym;
    }
    return a;
}

void alloc_stacks_destroy(alloc_stacks *a)
{
    if (!a)
        return;
    free(a->v);
    free(a->by_id.slots);
    free(a->by_frames.slots);
    free(a);
}

/* The first id with the frames f[0..n) (known under hash), else id. */
static uint32_t key_of(alloc_stacks *a, uint32_t id, uint64_t hash,
                       const uint64_t *f, size_t n)
{
    uint32_t first;
    const uint64_t *g;
    size_t m;
    if (!map_get(&a->by_frames, hash, &first)) {
        (void)map_put(&a->by_frames, hash, id); /* else: no later match */
        return id;
    }
    if (memtap_trace_stack(a->t, first, &g, &m) && m == n &&
        memcmp(f, g, n * sizeof *f) == 0)
        return first;
    return id; /* another stack of the same hash */
}

/* The info of stack id, made when new; NULL when the trace has no such
 * stack (or out of memory). */
static stack_info *info_of(alloc_stacks *a, uint32_t id)
{
    uint32_t i;
    if (map_get(&a->by_id, id, &i))
        return &a->v[i];
    const uint64_t *f;
    size_t n;
    if (!id || !memtap_trace_stack(a->t, id, &f, &n) || n == 0)
        return NULL;
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 64;
        stack_info *v = realloc(a->v, cap * sizeof *v);
        if (!v)
            return NULL;
        a->v = v;
        a->cap = cap;
    }
    if (map_put(&a->by_id, id, (uint32_t)a->n))
        return NULL;
    uint64_t hash = fnv1a64(FNV64_OFFSET, f, n * sizeof *f) | 1;
    a->v[a->n] = (stack_info){ .id = id, .key = key_of(a, id, hash, f, n) };
    return &a->v[a->n++];
}

uint32_t alloc_stacks_key(alloc_stacks *a, uint32_t id)
{
    const stack_info *s = info_of(a, id);
    return s ? s->key : 0;
}

/* The first frame no wrapper's (return addresses: the call is the byte
 * before), else the outermost. */
static uint64_t first_outside(alloc_stacks *a, const uint64_t *f, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char name[1024];
        if (!symbolizer_function(a->sym, f[i] - 1, name, sizeof name) ||
            !alloc_stacks_is_wrapper(name))
            return f[i];
    }
    return f[n - 1];
}

uint64_t alloc_stacks_site(alloc_stacks *a, const memtap_record *r)
{
    stack_info *s = a ? info_of(a, memtap_heap_stack(r)) : NULL;
    if (!s || !a->sym)
        return r->pc;
    if (!s->site) {
        const uint64_t *f;
        size_t n;
        memtap_trace_stack(a->t, s->id, &f, &n);
        s->site = f[0] == r->pc ? first_outside(a, f, n) : r->pc;
    }
    return s->site;
}
