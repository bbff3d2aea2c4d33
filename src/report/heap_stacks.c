/*
 * report/heap_stacks.c - heaptrack's questions per allocation call stack
 * (heap_stacks.h).  What a stack held when the heap peaked is kept
 * lazily: a stack's bytes at the latest peak are its bytes now unless it
 * changed since, so each stack settles that figure at its first change
 * after a peak (and all at the end), in constant time per event.
 */
#include "report/heap_stacks.h"

#include "sys/vec.h"

#include <stdlib.h>
#include <string.h>

static unsigned size_bin(uint64_t size)
{
    unsigned b = size > 1 ? 63u - (unsigned)__builtin_clzll(size) : 0;
    return b < HEAP_STACK_SIZES ? b : HEAP_STACK_SIZES - 1;
}

/* Its bytes at the latest peak, when that peak came after its last
 * change: what it holds now. */
static void settle(const heap_stacks *s, heap_stack *x)
{
    if (x->seen < s->peaks) {
        x->at_peak = x->live_bytes;
        x->seen = s->peaks;
    }
}

int heap_stacks_alloc(heap_stacks *s, uint32_t key, uint64_t site,
                      uint64_t size, int peak)
{
    int made;
    uint32_t *i = index_value(&s->by_key, key, &made);
    if (!i)
        return -1;
    if (made) {
        heap_stack *x = array_push((void **)&s->v, &s->n, &s->cap, sizeof *x);
        if (!x)
            return -1;
        *x = (heap_stack){ .key = key, .site = site, .seen = s->peaks };
        *i = (uint32_t)(s->n - 1);
    }
    heap_stack *x = &s->v[*i];
    settle(s, x);
    x->allocs++;
    x->bytes += size;
    x->live++;
    x->live_bytes += size;
    x->sizes[size_bin(size)]++;
    if (peak) {
        s->peaks++;
        x->at_peak = x->live_bytes;
        x->seen = s->peaks;
    }
    return 0;
}

void heap_stacks_free(heap_stacks *s, uint32_t key, uint64_t size,
                      int temporary)
{
    int64_t i = index_get(&s->by_key, key);
    if (i < 0)
        return;
    heap_stack *x = &s->v[i];
    settle(s, x);
    x->frees++;
    x->live--;
    x->live_bytes -= size;
    x->temporary += temporary != 0;
}

void heap_stacks_touch(heap_stacks *s, uint32_t key)
{
    if (s->last_key != key + 1) {
        int64_t i = index_get(&s->by_key, key);
        if (i < 0)
            return;
        s->last_key = key + 1;
        s->last = (size_t)i;
    }
    s->v[s->last].accesses++;
}

static int by_allocs(const void *a, const void *b)
{
    const heap_stack *x = a, *y = b;
    if (x->allocs != y->allocs)
        return x->allocs < y->allocs ? 1 : -1;
    return (x->key > y->key) - (x->key < y->key);
}

/* Adds a frame's text to x (a heap_stack). */
static int add_frame(void *arg, uint64_t pc, const char *text)
{
    heap_stack *x = arg;
    (void)pc;
    char **v = realloc(x->frames, (x->nframes + 1) * sizeof *v);
    if (!v)
        return -1;
    x->frames = v;
    if (!(v[x->nframes] = strdup(text)))
        return -1;
    x->nframes++;
    return 0;
}

int heap_stacks_finish(heap_stacks *s, symbolizer *sym)
{
    for (size_t i = 0; i < s->n; i++)
        settle(s, &s->v[i]);
    if (s->n)
        qsort(s->v, s->n, sizeof *s->v, by_allocs);
    s->last_key = 0;
    index_free(&s->by_key);
    for (size_t i = 0; i < s->n; i++)
        if (sym && symbolizer_stack_frames(sym, s->v[i].key, add_frame, &s->v[i]))
            return -1;
    return 0;
}

void heap_stacks_release(heap_stacks *s)
{
    for (size_t i = 0; i < s->n; i++) {
        for (uint32_t j = 0; j < s->v[i].nframes; j++)
            free(s->v[i].frames[j]);
        free(s->v[i].frames);
    }
    free(s->v);
    index_free(&s->by_key);
    memset(s, 0, sizeof *s);
}
