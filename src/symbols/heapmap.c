/*
 * heapmap.c - live and released heap blocks in two treaps keyed by start
 * address (ordered search without rebalancing bookkeeping).
 */
#include "heapmap.h"

#include <stdlib.h>

typedef struct node {
    heap_block b;
    uint32_t prio;
    struct node *l, *r;
} node;

typedef struct treap {
    node *root;
    uint64_t count;
} treap;

struct heap_map {
    treap live, released;
    uint32_t rng;
    uint64_t (*site)(void *arg, const memtap_record *r);
    void *site_arg;
};

static uint32_t next_prio(heap_map *m)
{
    m->rng ^= m->rng << 13;
    m->rng ^= m->rng >> 17;
    m->rng ^= m->rng << 5;
    return m->rng;
}

/* Splits t into keys < key (l) and keys >= key (r). */
static void split(node *t, uint64_t key, node **l, node **r)
{
    if (!t) {
        *l = *r = NULL;
    } else if (t->b.start < key) {
        split(t->r, key, &t->r, r);
        *l = t;
    } else {
        split(t->l, key, l, &t->l);
        *r = t;
    }
}

static node *merge(node *l, node *r)
{
    if (!l || !r)
        return l ? l : r;
    if (l->prio > r->prio) {
        l->r = merge(l->r, r);
        return l;
    }
    r->l = merge(l, r->l);
    return r;
}

static void insert(treap *t, node *n)
{
    node *l, *r;
    split(t->root, n->b.start, &l, &r);
    t->root = merge(merge(l, n), r);
    t->count++;
}

/* The node with the greatest start <= key. */
static node *floor_node(node *t, uint64_t key)
{
    node *best = NULL;
    while (t) {
        if (t->b.start <= key) {
            best = t;
            t = t->r;
        } else {
            t = t->l;
        }
    }
    return best;
}

/* Detaches the node starting exactly at key. */
static node *take(treap *t, uint64_t key)
{
    node *l, *mid, *r;
    split(t->root, key, &l, &r);
    split(r, key + 1, &mid, &r);
    /* keys are unique within a treap */
    t->root = merge(l, r);
    if (mid)
        t->count--;
    return mid;
}

static int holds(const heap_block *b, uint64_t addr)
{
    return addr >= b->start && addr - b->start < (b->size ? b->size : 1);
}

static void destroy(node *n)
{
    while (n) {
        destroy(n->l);
        node *r = n->r;
        free(n);
        n = r;
    }
}

heap_map *heap_map_create(void)
{
    heap_map *m = calloc(1, sizeof *m);
    if (m)
        m->rng = 2463534242u;
    return m;
}

void heap_map_name_sites(heap_map *m,
                         uint64_t (*site)(void *arg, const memtap_record *r),
                         void *arg)
{
    m->site = site;
    m->site_arg = arg;
}

void heap_map_destroy(heap_map *m)
{
    if (!m)
        return;
    destroy(m->live.root);
    destroy(m->released.root);
    free(m);
}

/* Drops released blocks overlapping [start, end): the addresses are new. */
static void forget_released(heap_map *m, uint64_t start, uint64_t end)
{
    node *n;
    while ((n = floor_node(m->released.root, end ? end - 1 : 0)) &&
           n->b.start + (n->b.size ? n->b.size : 1) > start) {
        free(take(&m->released, n->b.start));
    }
}

static void add_block(heap_map *m, const heap_block *b)
{
    node *n = calloc(1, sizeof *n);
    if (!n)
        return;
    forget_released(m, b->start, b->start + (b->size ? b->size : 1));
    free(take(&m->live, b->start)); /* a stale block at the same start */
    n->b = *b;
    n->prio = next_prio(m);
    insert(&m->live, n);
}

/* Moves the live block starting at addr to the released tree. */
static int release(heap_map *m, uint64_t addr, heap_block *old)
{
    node *n = take(&m->live, addr);
    if (!n)
        return 0;
    n->b.released = 1;
    if (old)
        *old = n->b;
    free(take(&m->released, n->b.start));
    insert(&m->released, n);
    return 1;
}

/* munmap of [addr, addr+len): whole mappings are released, partly covered
 * ones are trimmed (the unmapped part is remembered as released). */
static int unmap_range(heap_map *m, uint64_t addr, uint64_t len,
                       heap_block *old)
{
    int found = 0;
    uint64_t end = addr + len;
    node *n;
    while ((n = floor_node(m->live.root, end ? end - 1 : 0)) &&
           n->b.start + n->b.size > addr && n->b.start < end) {
        heap_block b = n->b;
        free(take(&m->live, b.start));
        uint64_t bend = b.start + b.size;
        if (b.start < addr) {
            heap_block head = b;
            head.size = addr - b.start;
            add_block(m, &head);
        }
        if (bend > end) {
            heap_block tail = b;
            tail.start = end;
            tail.size = bend - end;
            add_block(m, &tail);
        }
        heap_block gone = b;
        gone.start = b.start > addr ? b.start : addr;
        gone.size = (bend < end ? bend : end) - gone.start;
        gone.released = 1;
        node *g = calloc(1, sizeof *g);
        if (g) {
            g->b = gone;
            g->prio = next_prio(m);
            free(take(&m->released, gone.start));
            insert(&m->released, g);
        }
        if (!found && old)
            *old = gone;
        found = 1;
    }
    return found;
}

int heap_map_apply(heap_map *m, const memtap_record *r, heap_block *old)
{
    heap_block b = { .start = memtap_alloc_block(r), .size = r->size,
                     .id = memtap_alloc_number(r), .site = r->pc,
                     .stack = memtap_heap_stack(r), .kind = r->kind,
                     .flags = r->flags };
    if (m->site && memtap_kind_is_alloc(r->kind))
        b.site = m->site(m->site_arg, r);
    int released = 0;
    switch (r->kind) {
    case MEMTAP_EV_MALLOC:
    case MEMTAP_EV_CALLOC:
    case MEMTAP_EV_MMAP:
        add_block(m, &b);
        break;
    case MEMTAP_EV_REALLOC:
    case MEMTAP_EV_MREMAP:
        if (memtap_alloc_replaced(r))
            released = release(m, memtap_alloc_replaced(r), old);
        if (r->addr)
            add_block(m, &b);
        break;
    case MEMTAP_EV_FREE:
        released = release(m, r->addr, old);
        break;
    case MEMTAP_EV_MUNMAP:
        released = unmap_range(m, r->addr, r->size, old);
        break;
    default:
        break;
    }
    return released;
}

const heap_block *heap_map_find(const heap_map *m, uint64_t addr)
{
    node *n = floor_node(m->live.root, addr);
    if (n && holds(&n->b, addr))
        return &n->b;
    n = floor_node(m->released.root, addr);
    if (n && holds(&n->b, addr))
        return &n->b;
    return NULL;
}

/* The node with the least start > key. */
static node *above_node(node *t, uint64_t key)
{
    node *best = NULL;
    while (t) {
        if (t->b.start > key) {
            best = t;
            t = t->l;
        } else {
            t = t->r;
        }
    }
    return best;
}

void heap_map_gap(const heap_map *m, uint64_t addr, uint64_t *lo, uint64_t *hi)
{
    *lo = 0;
    *hi = UINT64_MAX;
    const treap *trees[2] = { &m->live, &m->released };
    for (int i = 0; i < 2; i++) {
        const node *below = floor_node(trees[i]->root, addr);
        const node *above = above_node(trees[i]->root, addr);
        uint64_t end = below ? below->b.start + (below->b.size ? below->b.size : 1) : 0;
        if (end > *lo)
            *lo = end;
        if (above && above->b.start < *hi)
            *hi = above->b.start;
    }
}

uint64_t heap_map_live(const heap_map *m)
{
    return m->live.count;
}
