/*
 * cache_model.c - the pieces of the data cache model (cache_model.h).
 */
#include "report/cache_model.h"
#include "sys/vec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cache_level_init(cache_level *l, const cache_geometry *g)
{
    memset(l, 0, sizeof *l);
    l->assoc = g->assoc;
    l->sets = g->size / ((uint64_t)g->assoc * g->line);
    l->set_mask = (l->sets & (l->sets - 1)) == 0 ? l->sets - 1 : 0;
    l->tags = calloc(l->sets * l->assoc, sizeof *l->tags);
    l->ways = calloc(l->sets * l->assoc, sizeof *l->ways);
    return l->tags && l->ways ? 0 : -1;
}

void cache_level_free(cache_level *l)
{
    free(l->tags);
    free(l->ways);
}

/* The way of set `at` that holds line, or assoc. */
static uint32_t way_of(const cache_level *l, uint64_t at, uint64_t line)
{
    uint32_t w = 0;
    while (w < l->assoc && l->tags[at + w] != line + 1)
        w++;
    return w;
}

/* Way w of set `at` becomes the most recently used, its line and the
 * rest the given ones (the ways before it one place down). */
static void to_front(cache_level *l, uint64_t at, uint32_t w, uint64_t tag, cache_way way)
{
    uint64_t *t = &l->tags[at];
    cache_way *c = &l->ways[at];
    for (; w > 0; w--) { /* (a few ways: a call to memmove cost more) */
        t[w] = t[w - 1];
        c[w] = c[w - 1];
    }
    t[0] = tag;
    c[0] = way;
}

int cache_level_access_rest(cache_level *l, uint64_t at, uint64_t line, uint32_t owner,
                            cache_victim *out)
{
    uint32_t w = way_of(l, at, line);
    if (w < l->assoc) {
        cache_way way = l->ways[at + w];
        if (owner)
            way.dirty = owner;
        to_front(l, at, w, line + 1, way);
        return 1;
    }
    w = l->assoc - 1;
    *out = (cache_victim){ l->tags[at + w] - 1, l->tags[at + w] ? l->ways[at + w].dirty : 0 };
    to_front(l, at, w, line + 1, (cache_way){ owner, 0 });
    return 0;
}

int cache_level_write_back(cache_level *l, uint64_t line, uint32_t owner)
{
    uint64_t at = cache_level_set(l, line);
    uint32_t w = way_of(l, at, line);
    if (w == l->assoc)
        return 0;
    l->ways[at + w].dirty = owner;
    return 1;
}

int cache_level_drop(cache_level *l, uint64_t line)
{
    uint64_t at = cache_level_set(l, line);
    uint32_t w = way_of(l, at, line);
    if (w == l->assoc)
        return 0;
    /* the later ways one place up, the empty way last */
    memmove(&l->tags[at + w], &l->tags[at + w + 1], (l->assoc - 1 - w) * sizeof *l->tags);
    memmove(&l->ways[at + w], &l->ways[at + w + 1], (l->assoc - 1 - w) * sizeof *l->ways);
    l->tags[at + l->assoc - 1] = 0;
    l->ways[at + l->assoc - 1] = (cache_way){ 0, 0 };
    return 1;
}

#define NONE UINT32_MAX
#define DROPPED UINT64_MAX /* a slot's line after cache_full_drop */

int cache_full_init(cache_full *f, uint32_t lines)
{
    memset(f, 0, sizeof *f);
    uint64_t size = 1;
    while (size < 2ull * lines)
        size <<= 1;
    f->cap = lines;
    f->head = f->tail = NONE;
    f->mask = size - 1;
    f->line = calloc(lines, sizeof *f->line);
    f->prev = calloc(lines, sizeof *f->prev);
    f->next = calloc(lines, sizeof *f->next);
    f->table = calloc(size, sizeof *f->table);
    return f->line && f->prev && f->next && f->table ? 0 : -1;
}

void cache_full_free(cache_full *f)
{
    free(f->line);
    free(f->prev);
    free(f->next);
    free(f->table);
}

static uint64_t home(const cache_full *f, uint64_t line)
{
    return (line * 0x9e3779b97f4a7c15ull >> 20) & f->mask;
}

/* The table position holding line, or the empty one where it would go. */
static uint64_t full_find(const cache_full *f, uint64_t line)
{
    uint64_t i = home(f, line);
    while (f->table[i] && f->line[f->table[i] - 1] != line)
        i = (i + 1) & f->mask;
    return i;
}

/* Empties table position i, shifting back the entries after it. */
static void full_erase(cache_full *f, uint64_t i)
{
    f->table[i] = 0;
    for (uint64_t j = (i + 1) & f->mask; f->table[j]; j = (j + 1) & f->mask) {
        uint64_t h = home(f, f->line[f->table[j] - 1]);
        /* entry j may move to i when i lies between its home and j */
        if (((j - h) & f->mask) >= ((j - i) & f->mask)) {
            f->table[i] = f->table[j];
            f->table[j] = 0;
            i = j;
        }
    }
}

static void unlink_slot(cache_full *f, uint32_t k)
{
    if (f->prev[k] != NONE)
        f->next[f->prev[k]] = f->next[k];
    else
        f->head = f->next[k];
    if (f->next[k] != NONE)
        f->prev[f->next[k]] = f->prev[k];
    else
        f->tail = f->prev[k];
}

static void push_front(cache_full *f, uint32_t k)
{
    f->prev[k] = NONE;
    f->next[k] = f->head;
    if (f->head != NONE)
        f->prev[f->head] = k;
    f->head = k;
    if (f->tail == NONE)
        f->tail = k;
}

static void push_back(cache_full *f, uint32_t k)
{
    f->next[k] = NONE;
    f->prev[k] = f->tail;
    if (f->tail != NONE)
        f->next[f->tail] = k;
    f->tail = k;
    if (f->head == NONE)
        f->head = k;
}

int cache_full_access(cache_full *f, uint64_t line)
{
    uint64_t i = full_find(f, line);
    if (f->table[i]) {
        uint32_t k = f->table[i] - 1;
        unlink_slot(f, k);
        push_front(f, k);
        return 1;
    }
    uint32_t k;
    if (f->n < f->cap) {
        k = f->n++;
    } else {
        k = f->tail;
        unlink_slot(f, k);
        if (f->line[k] != DROPPED)
            full_erase(f, full_find(f, f->line[k]));
        i = full_find(f, line);
    }
    f->line[k] = line;
    f->table[i] = k + 1;
    push_front(f, k);
    return 0;
}

int cache_full_drop(cache_full *f, uint64_t line)
{
    uint64_t i = full_find(f, line);
    if (!f->table[i])
        return 0;
    uint32_t k = f->table[i] - 1;
    full_erase(f, i);
    unlink_slot(f, k);
    f->line[k] = DROPPED;
    push_back(f, k); /* last: the next to be taken */
    return 1;
}



void reuse_clock_init(reuse_clock *c, uint64_t mark)
{
    memset(c, 0, sizeof *c);
    c->head = c->tail = NONE;
    /* ranges from 0, 1, 2, 4, ..., one more cut at mark */
    for (uint64_t from = 0; c->nranges < REUSE_RANGES;) {
        c->first[c->nranges] = NONE;
        c->from[c->nranges++] = from;
        uint64_t to = from ? 2ull << (63 - __builtin_clzll(from)) : 1; /* (a power of two) */
        from = mark > from && mark < to ? mark : to;
    }
}

void reuse_clock_free(reuse_clock *c)
{
    free(c->nodes);
    index_free(&c->pages);
    free(c->page_nodes);
}

/* The node of line, made on its first use (*made set); NONE when out
 * of memory.  Lines are found a page of them at a time (a hash entry
 * for 64 lines, 4 bytes a line where a program's data is dense, not a
 * hash entry each: 8.4 M lines took 1.45 GB before). */
static uint32_t node_of(reuse_clock *c, uint64_t line, int *made)
{
    int new_page;
    uint32_t *page = index_value(&c->pages, line / REUSE_PAGE_LINES, &new_page);
    if (!page)
        return NONE;
    if (new_page) {
        if (!array_push((void **)&c->page_nodes, &c->npages, &c->pages_cap,
                        sizeof *c->page_nodes))
            return NONE;
        *page = (uint32_t)(c->npages - 1);
    }
    uint32_t *at = &c->page_nodes[*page][line % REUSE_PAGE_LINES];
    *made = *at == 0;
    if (*made) {
        if (!array_push((void **)&c->nodes, &c->nnodes, &c->nodes_cap, sizeof *c->nodes))
            return NONE;
        c->nodes[c->nnodes - 1] = (reuse_node){ line, NONE, NONE, 0 };
        /* (at is still good: page_nodes did not move since) */
        *at = (uint32_t)c->nnodes;
    }
    return *at - 1;
}

int64_t reuse_clock_use(reuse_clock *c, uint64_t line, uint32_t *node)
{
    int made = 0;
    uint32_t i = *node ? *node - 1 : node_of(c, line, &made);
    if (i == NONE)
        return -2;
    *node = i + 1;
    reuse_node *x = &c->nodes[i];
    /* a new line goes as if from the stack's next position */
    unsigned k = made ? c->end : x->range;
    if (!made && k == 0)
        return 0; /* the most recent already */
    /* each range before k starts one line earlier, at the line ahead of
     * its first; range k's first may be the line itself, or none yet
     * (a new line's range: the stack's last is then) */
    for (unsigned j = 1; j < k; j++) {
        uint32_t g = c->nodes[c->first[j]].prev;
        c->first[j] = g;
        c->nodes[g].range = j;
    }
    if (k > 0) {
        uint32_t f = c->first[k];
        uint32_t g = f == NONE ? c->tail : f == i ? x->prev : c->nodes[f].prev;
        c->first[k] = g;
        c->nodes[g].range = k;
    }
    if (!made) { /* out of the list */
        c->nodes[x->prev].next = x->next;
        if (x->next != NONE)
            c->nodes[x->next].prev = x->prev;
        else
            c->tail = x->prev;
    } else if (c->end + 1 < c->nranges && c->nnodes >= c->from[c->end + 1]) {
        c->end++;
    }
    x->prev = NONE;
    x->next = c->head;
    if (c->head != NONE)
        c->nodes[c->head].prev = i;
    else
        c->tail = i;
    c->head = i;
    x->range = 0;
    c->first[0] = i;
    return made ? -1 : (int64_t)c->from[k];
}

int reuse_clock_recent(const reuse_clock *c, cache_full *f)
{
    uint32_t *by = malloc(((size_t)f->cap + 1) * sizeof *by);
    if (!by)
        return -1;
    size_t n = 0; /* the most recent first */
    for (uint32_t i = c->head; i != NONE && n < f->cap; i = c->nodes[i].next)
        by[n++] = i;
    while (n-- > 0)
        cache_full_access(f, c->nodes[by[n]].line);
    free(by);
    return 0;
}

/* A number with an optional K or M (binary). */
static int size_of(const char *s, char **end, uint64_t *out)
{
    if (*s < '0' || *s > '9')
        return -1;
    *out = strtoull(s, end, 10);
    if (**end == 'K' || **end == 'k')
        *out <<= 10, (*end)++;
    else if (**end == 'M' || **end == 'm')
        *out <<= 20, (*end)++;
    return 0;
}

static int valid(const cache_geometry *g)
{
    return g->line >= 8 && g->line <= 4096 && !(g->line & (g->line - 1)) &&
           g->assoc > 0 && g->size > 0 &&
           g->size % ((uint64_t)g->assoc * g->line) == 0;
}

int cache_geometry_parse(const char *s, cache_geometry *out)
{
    char *end;
    uint64_t size, assoc, line;
    if (size_of(s, &end, &size) != 0 || *end != ',' ||
        size_of(end + 1, &end, &assoc) != 0 || *end != ',' ||
        size_of(end + 1, &end, &line) != 0 || *end || assoc > UINT32_MAX ||
        line > UINT32_MAX)
        return -1;
    *out = (cache_geometry){ size, (uint32_t)assoc, (uint32_t)line };
    return valid(out) ? 0 : -1;
}

/* The first line of a sysfs file, newline dropped; 0, or -1. */
static int sysfs_text(const char *dir, const char *name, char *buf, size_t cap)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int ok = fgets(buf, (int)cap, f) != NULL;
    fclose(f);
    buf[strcspn(buf, "\n")] = '\0';
    return ok ? 0 : -1;
}

int cache_geometry_of_machine(cache_geometry *d1, cache_geometry *ll)
{
    int have_d1 = 0, ll_level = 0;
    for (int i = 0; i < 16; i++) {
        char dir[128], type[32], lvl[8], size[32], ways[16], line[16];
        snprintf(dir, sizeof dir, "/sys/devices/system/cpu/cpu0/cache/index%d", i);
        if (sysfs_text(dir, "type", type, sizeof type) != 0)
            break;
        cache_geometry g;
        char *end;
        uint64_t sz;
        if (sysfs_text(dir, "level", lvl, sizeof lvl) != 0 ||
            sysfs_text(dir, "size", size, sizeof size) != 0 ||
            sysfs_text(dir, "ways_of_associativity", ways, sizeof ways) != 0 ||
            sysfs_text(dir, "coherency_line_size", line, sizeof line) != 0 ||
            size_of(size, &end, &sz) != 0)
            continue;
        g = (cache_geometry){ sz, (uint32_t)atoi(ways), (uint32_t)atoi(line) };
        if (!valid(&g))
            continue;
        if (atoi(lvl) == 1 && strcmp(type, "Data") == 0) {
            *d1 = g;
            have_d1 = 1;
        } else if (strcmp(type, "Unified") == 0 && atoi(lvl) > ll_level) {
            *ll = g;
            ll_level = atoi(lvl);
        }
    }
    return have_d1 && ll_level ? 0 : -1;
}
