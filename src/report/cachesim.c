/*
 * cachesim.c - the data cache model and its report (cachesim.h): a tool
 * of the offline interface (trace/tool.h) that runs every line access
 * through D1 and LL and counts the misses per object, as the namer names
 * the address the access starts at.
 */
#define _GNU_SOURCE
#include "report/cachesim.h"
#include "report/index.h"
#include "report/json.h"
#include "symbols/heapmap.h"
#include "symbols/namer.h"
#include "sys/vec.h"
#include "trace/accesses.h"
#include "trace/tool.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define NAME_CAP 512
#define ADDR_CACHE 4096 /* the names of recent addresses, direct-mapped */

/* One level: sets of `assoc` lines, each with the time of its last use. */
typedef struct level {
    uint64_t sets;
    uint32_t assoc;
    uint64_t *tags;      /* line number + 1; 0: empty */
    uint64_t *used;
    uint64_t clock;
} level;

/* A fully associative LRU cache of as many lines as D1: a D1 miss that
 * it would have hit is a conflict miss (the set's fault), one it misses
 * too a capacity miss.  Lines in a list by last use, found by an
 * open-addressing table (linear probing, deletion by backward shift). */
typedef struct full_lru {
    uint32_t cap, n, head, tail;   /* head: most recent; UINT32_MAX: none */
    uint64_t *line;                /* per slot */
    uint32_t *prev, *next;
    uint32_t *table;               /* slot + 1, 0: empty */
    uint64_t mask;                 /* table size - 1 */
} full_lru;

#define REUSE_BINS 40 /* 0, 1, 2-3, 4-7, ... distinct lines between uses */

typedef struct object_stats {
    char *name;
    uint64_t accesses, d1, ll, compulsory, capacity, conflict;
    uint64_t reuse[REUSE_BINS];
} object_stats;

/* Reuse distances: each line's last use is a mark at its time slot in a
 * Fenwick tree, so the distinct lines used between two uses of a line are
 * the marks between its two slots.  When the slots run out, the live
 * marks are numbered again in order (and the tree grows when they fill
 * an eighth of it). */
typedef struct reuse_clock {
    uint32_t *tree;      /* 1..cap */
    uint32_t cap, now;
} reuse_clock;

typedef struct insn_stats {
    uint64_t pc;
    uint64_t accesses, d1, ll;
} insn_stats;

typedef struct named {
    uint64_t addr, gen;  /* gen 0: empty */
    uint32_t object;
} named;

typedef struct sim {
    level d1, ll;
    full_lru full;
    unsigned line_shift;
    symbolizer *sym;
    namer *names;
    uint64_t gen;        /* heap events so far + 1: names change with them */
    named *recent;
    struct {             /* the last object found, over its whole extent */
        uint64_t lo, hi, gen;
        uint32_t object;
    } span;
    index_map seen;      /* lines touched -> the slot of their last use */
    reuse_clock clock;
    index_map by_name;
    object_stats *objects;
    size_t nobjects, objects_cap;
    index_map by_pc;
    insn_stats *insns;
    size_t ninsns, insns_cap;
    uint64_t accesses, reads, writes, d1_misses, ll_misses, compulsory;
    uint64_t capacity, conflict;
} sim;

static int level_init(level *l, const cache_geometry *g)
{
    memset(l, 0, sizeof *l);
    l->assoc = g->assoc;
    l->sets = g->size / ((uint64_t)g->assoc * g->line);
    l->tags = calloc(l->sets * l->assoc, sizeof *l->tags);
    l->used = calloc(l->sets * l->assoc, sizeof *l->used);
    return l->tags && l->used ? 0 : -1;
}

static void level_free(level *l)
{
    free(l->tags);
    free(l->used);
}

/* Looks line up; on a miss it replaces the set's least recently used
 * line.  Returns 1 on a hit. */
static int level_access(level *l, uint64_t line)
{
    uint64_t *tags = &l->tags[(line % l->sets) * l->assoc];
    uint64_t *used = &l->used[(line % l->sets) * l->assoc];
    uint32_t victim = 0;
    l->clock++;
    for (uint32_t w = 0; w < l->assoc; w++) {
        if (tags[w] == line + 1) {
            used[w] = l->clock;
            return 1;
        }
        if (used[w] < used[victim])
            victim = w;
    }
    tags[victim] = line + 1;
    used[victim] = l->clock;
    return 0;
}

#define NONE UINT32_MAX

static int full_init(full_lru *f, uint32_t lines)
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

static void full_free(full_lru *f)
{
    free(f->line);
    free(f->prev);
    free(f->next);
    free(f->table);
}

static uint64_t home(const full_lru *f, uint64_t line)
{
    return (line * 0x9e3779b97f4a7c15ull >> 20) & f->mask;
}

/* The table position holding line, or the empty one where it would go. */
static uint64_t full_find(const full_lru *f, uint64_t line)
{
    uint64_t i = home(f, line);
    while (f->table[i] && f->line[f->table[i] - 1] != line)
        i = (i + 1) & f->mask;
    return i;
}

/* Empties table position i, shifting back the entries after it. */
static void full_erase(full_lru *f, uint64_t i)
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

static void unlink_slot(full_lru *f, uint32_t k)
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

static void push_front(full_lru *f, uint32_t k)
{
    f->prev[k] = NONE;
    f->next[k] = f->head;
    if (f->head != NONE)
        f->prev[f->head] = k;
    f->head = k;
    if (f->tail == NONE)
        f->tail = k;
}

/* An access of line: 1 on a hit; on a miss the least recently used line
 * makes room. */
static int full_access(full_lru *f, uint64_t line)
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
        full_erase(f, full_find(f, f->line[k]));
        i = full_find(f, line);
    }
    f->line[k] = line;
    f->table[i] = k + 1;
    push_front(f, k);
    return 0;
}

static void tree_add(reuse_clock *c, uint32_t i, int32_t v)
{
    for (; i <= c->cap; i += i & -i)
        c->tree[i] += (uint32_t)v;
}

static uint32_t tree_prefix(const reuse_clock *c, uint32_t i)
{
    uint32_t n = 0;
    for (; i > 0; i -= i & -i)
        n += c->tree[i];
    return n;
}

typedef struct slot_ref {
    uint32_t slot;
    index_slot *entry;
} slot_ref;

static int by_slot(const void *a, const void *b)
{
    const slot_ref *x = a, *y = b;
    return x->slot < y->slot ? -1 : x->slot > y->slot;
}

/* Numbers the lines' last uses 1..n again, in order; 0, or -1 when out of
 * memory. */
static int renumber(reuse_clock *c, index_map *seen)
{
    slot_ref *refs = malloc((seen->n + 1) * sizeof *refs);
    if (!refs)
        return -1;
    size_t n = 0;
    for (size_t i = 0; i < seen->cap; i++)
        if (seen->v[i].used)
            refs[n++] = (slot_ref){ seen->v[i].value, &seen->v[i] };
    qsort(refs, n, sizeof *refs, by_slot);
    if (8 * n >= c->cap) { /* keep most slots free: fewer renumberings */
        uint32_t *t = realloc(c->tree, ((size_t)c->cap * 2 + 1) * sizeof *t);
        if (!t) {
            free(refs);
            return -1;
        }
        c->tree = t;
        c->cap *= 2;
    }
    memset(c->tree, 0, ((size_t)c->cap + 1) * sizeof *c->tree);
    for (size_t i = 0; i < n; i++) {
        refs[i].entry->value = (uint32_t)i + 1;
        tree_add(c, (uint32_t)i + 1, 1);
    }
    c->now = (uint32_t)n;
    free(refs);
    return 0;
}

/* A use of line: its reuse distance (distinct lines since its last use),
 * or -1 for its first use; -2 when out of memory. */
static int64_t reuse_distance(sim *s, uint64_t line)
{
    reuse_clock *c = &s->clock;
    if (c->now == c->cap && renumber(c, &s->seen) != 0)
        return -2;
    int64_t last = index_get(&s->seen, line);
    uint32_t t = ++c->now;
    int64_t d = -1;
    if (last >= 0) {
        d = tree_prefix(c, t - 1) - tree_prefix(c, (uint32_t)last);
        tree_add(c, (uint32_t)last, -1);
    }
    tree_add(c, t, 1);
    return index_put(&s->seen, line, t) == 0 ? d : -2;
}

static int reuse_bin(int64_t d)
{
    int b = d == 0 ? 0 : 64 - __builtin_clzll((uint64_t)d);
    return b < REUSE_BINS ? b : REUSE_BINS - 1;
}

/* The object holding addr, by index into s->objects; -1 when out of
 * memory. */
static int64_t object_of(sim *s, uint64_t addr)
{
    if (addr - s->span.lo < s->span.hi - s->span.lo && s->span.gen == s->gen)
        return s->span.object; /* an array's elements, one after another */
    named *r = &s->recent[(addr >> 3) % ADDR_CACHE];
    if (r->gen == s->gen && r->addr == addr)
        return r->object;
    data_name d;
    char name[NAME_CAP];
    namer_data(s->names, addr, &d);
    if (d.kind == DATA_HEAP) /* a site's blocks together, as report has them */
        symbolizer_site_text(s->sym, &d.block, name, sizeof name);
    else
        namer_object_text(s->names, &d, name, sizeof name);
    int64_t i = index_get_str(&s->by_name, name);
    if (i < 0) {
        object_stats *o = array_push((void **)&s->objects, &s->nobjects,
                                     &s->objects_cap, sizeof *o);
        if (!o || !(o->name = strdup(name)) ||
            index_put_str(&s->by_name, name, (uint32_t)(s->nobjects - 1)) != 0)
            return -1;
        i = (int64_t)s->nobjects - 1;
    }
    *r = (named){ addr, s->gen, (uint32_t)i };
    if (d.kind == DATA_HEAP)
        s->span.lo = d.block.start, s->span.hi = d.block.start + d.block.size;
    else if (d.end > d.start)
        s->span.lo = d.start, s->span.hi = d.end;
    else /* no extent known: an empty span */
        s->span.lo = s->span.hi = 0;
    s->span.gen = s->gen;
    s->span.object = (uint32_t)i;
    return i;
}

/* The instruction at pc, by index into s->insns; -1 when out of memory. */
static int64_t insn_of(sim *s, uint64_t pc)
{
    int64_t i = index_get(&s->by_pc, pc);
    if (i >= 0)
        return i;
    insn_stats *x = array_push((void **)&s->insns, &s->ninsns, &s->insns_cap,
                               sizeof *x);
    if (!x || index_put(&s->by_pc, pc, (uint32_t)(s->ninsns - 1)) != 0)
        return -1;
    x->pc = pc;
    return (int64_t)s->ninsns - 1;
}

/* One line access starting at addr, by the instruction at pc; 0, or 1
 * when out of memory. */
static int access_line(sim *s, uint64_t pc, uint64_t addr, int write)
{
    uint64_t line = addr >> s->line_shift;
    int64_t distance = reuse_distance(s, line);
    if (distance == -2)
        return 1;
    int first = distance < 0;
    int d1_hit = level_access(&s->d1, line);
    int ll_hit = d1_hit || level_access(&s->ll, line);
    int full_hit = full_access(&s->full, line);
    int capacity = !d1_hit && !first && !full_hit;
    int conflict = !d1_hit && !first && full_hit;
    int64_t i = object_of(s, addr), k = insn_of(s, pc);
    if (i < 0 || k < 0)
        return 1;
    insn_stats *x = &s->insns[k];
    x->accesses++;
    x->d1 += !d1_hit;
    x->ll += !ll_hit;
    object_stats *o = &s->objects[i];
    o->accesses++;
    o->d1 += !d1_hit;
    o->ll += !ll_hit;
    o->compulsory += first;
    if (!first)
        o->reuse[reuse_bin(distance)]++;
    o->capacity += capacity;
    o->conflict += conflict;
    s->accesses++;
    s->reads += !write;
    s->writes += write;
    s->d1_misses += !d1_hit;
    s->ll_misses += !ll_hit;
    s->compulsory += first;
    s->capacity += capacity;
    s->conflict += conflict;
    return 0;
}

/* One event (the tool's, trace/tool.h): its accesses, line by line. */
static int take(void *self, const memtap_event *ev)
{
    sim *s = self;
    const memtap_record *r = &ev->rec;
    trace_access a[2];
    int n = trace_record_accesses(r, a);
    if (n == 0 && heap_map_kind(r->kind)) { /* names change */
        namer_learn(s->names, r, NULL);
        s->gen++;
    }
    uint64_t line = 1ull << s->line_shift;
    for (int k = 0; k < n; k++) {
        uint64_t addr = a[k].addr, size = a[k].size ? a[k].size : 1;
        while (size > 0) {
            uint64_t piece = trace_line_piece(addr, size, line);
            if (access_line(s, r->pc, addr, a[k].write))
                return 1;
            addr += piece;
            size -= piece;
        }
    }
    return 0;
}

static int by_d1_misses(const void *a, const void *b)
{
    const object_stats *x = a, *y = b;
    if (x->d1 != y->d1)
        return x->d1 < y->d1 ? 1 : -1;
    return strcmp(x->name, y->name);
}

static int insn_by_d1_misses(const void *a, const void *b)
{
    const insn_stats *x = a, *y = b;
    if (x->d1 != y->d1)
        return x->d1 < y->d1 ? 1 : -1;
    return x->pc < y->pc ? -1 : x->pc > y->pc;
}

static double per_mille(uint64_t n, uint64_t of)
{
    return of ? 1000.0 * (double)n / (double)of : 0.0;
}

static void print_report(sim *s, const cachesim_options *opt, FILE *out)
{
    const cache_geometry *d1 = &opt->d1, *ll = &opt->ll;
    fprintf(out, "cache model: D1 %" PRIu64 " B, %u-way, %u-B lines; LL %" PRIu64
                 " B, %u-way, %u-B lines; LRU, write-allocate\n",
            d1->size, d1->assoc, d1->line, ll->size, ll->assoc, ll->line);
    fprintf(out, "line accesses: %" PRIu64 " (%" PRIu64 " reads, %" PRIu64
                 " writes); lines touched: %" PRIu64 "\n",
            s->accesses, s->reads, s->writes, s->compulsory);
    fprintf(out, "D1 misses: %" PRIu64 " (%.1f per 1000 accesses); LL misses: %"
                 PRIu64 " (%.1f per 1000)\n",
            s->d1_misses, per_mille(s->d1_misses, s->accesses), s->ll_misses,
            per_mille(s->ll_misses, s->accesses));
    fprintf(out, "D1 misses by cause: compulsory %" PRIu64 ", capacity %" PRIu64
                 ", conflict %" PRIu64 "\n", s->compulsory, s->capacity, s->conflict);
    qsort(s->objects, s->nobjects, sizeof *s->objects, by_d1_misses);
    fprintf(out, "\nobjects by D1 misses:\n%11s %11s %11s %11s %11s %11s  %s\n",
            "D1 misses", "LL misses", "compulsory", "capacity", "conflict",
            "accesses", "object");
    for (size_t i = 0; i < s->nobjects && (int)i < opt->top; i++) {
        const object_stats *o = &s->objects[i];
        fprintf(out, "%11" PRIu64 " %11" PRIu64 " %11" PRIu64 " %11" PRIu64 " %11" PRIu64
                     " %11" PRIu64 "  %s\n", o->d1, o->ll, o->compulsory, o->capacity,
                o->conflict, o->accesses, o->name);
    }
    fprintf(out, "\nreuse distances of these objects (distinct lines used between "
                 "two uses of a line: uses):\n");
    for (size_t i = 0; i < s->nobjects && (int)i < opt->top; i++) {
        const object_stats *o = &s->objects[i];
        fprintf(out, "  %s:", o->name);
        for (int b = 0; b < REUSE_BINS; b++)
            if (o->reuse[b] && b < 2)
                fprintf(out, " %d: %" PRIu64, b, o->reuse[b]);
            else if (o->reuse[b])
                fprintf(out, " %llu-%llu: %" PRIu64, 1ull << (b - 1),
                        (1ull << b) - 1, o->reuse[b]);
        fprintf(out, o->accesses > o->compulsory ? "\n" : " (no line used twice)\n");
    }
    qsort(s->insns, s->ninsns, sizeof *s->insns, insn_by_d1_misses);
    fprintf(out, "\ninstructions by D1 misses:\n%11s %11s %11s  %s\n", "D1 misses",
            "LL misses", "accesses", "instruction");
    for (size_t i = 0; i < s->ninsns && (int)i < opt->top; i++) {
        const insn_stats *x = &s->insns[i];
        char code[NAME_CAP], line[NAME_CAP];
        symbolizer_code(s->sym, x->pc, code, sizeof code);
        int has_line = symbolizer_line(s->sym, x->pc, line, sizeof line);
        fprintf(out, "%11" PRIu64 " %11" PRIu64 " %11" PRIu64 "  %s%s%s\n", x->d1,
                x->ll, x->accesses, code, has_line ? " " : "", has_line ? line : "");
    }
}

static void json_level(FILE *out, const char *key, const cache_geometry *g)
{
    fprintf(out, "\"%s\": {\"size\": %" PRIu64 ", \"assoc\": %u, \"line\": %u}", key,
            g->size, g->assoc, g->line);
}

/* The same as print_report, as one JSON object: every object, the top
 * instructions. */
static void print_json(sim *s, const cachesim_options *opt, FILE *out)
{
    qsort(s->objects, s->nobjects, sizeof *s->objects, by_d1_misses);
    qsort(s->insns, s->ninsns, sizeof *s->insns, insn_by_d1_misses);
    fputc('{', out);
    json_level(out, "d1", &opt->d1);
    fputs(", ", out);
    json_level(out, "ll", &opt->ll);
    fprintf(out, ", \"accesses\": %" PRIu64 ", \"reads\": %" PRIu64 ", \"writes\": %"
                 PRIu64 ", \"d1_misses\": %" PRIu64 ", \"ll_misses\": %" PRIu64
                 ", \"compulsory\": %" PRIu64 ", \"capacity\": %" PRIu64
                 ", \"conflict\": %" PRIu64 ",\n\"objects\": [",
            s->accesses, s->reads, s->writes, s->d1_misses, s->ll_misses, s->compulsory,
            s->capacity, s->conflict);
    for (size_t i = 0; i < s->nobjects; i++) {
        const object_stats *o = &s->objects[i];
        fputs(i ? ",\n{\"name\": " : "\n{\"name\": ", out);
        json_str(out, o->name);
        fprintf(out, ", \"accesses\": %" PRIu64 ", \"d1_misses\": %" PRIu64
                     ", \"ll_misses\": %" PRIu64 ", \"compulsory\": %" PRIu64
                     ", \"capacity\": %" PRIu64 ", \"conflict\": %" PRIu64
                     ", \"reuse\": [", o->accesses, o->d1, o->ll, o->compulsory,
                o->capacity, o->conflict);
        int first = 1;
        for (int b = 0; b < REUSE_BINS; b++)
            if (o->reuse[b]) {
                fprintf(out, "%s[%llu, %llu, %" PRIu64 "]", first ? "" : ", ",
                        b ? 1ull << (b - 1) : 0ull, b ? (1ull << b) - 1 : 0ull,
                        o->reuse[b]);
                first = 0;
            }
        fputs("]}", out);
    }
    fputs("],\n\"instructions\": [", out);
    for (size_t i = 0; i < s->ninsns && (int)i < opt->top; i++) {
        const insn_stats *x = &s->insns[i];
        char code[NAME_CAP], line[NAME_CAP];
        symbolizer_code(s->sym, x->pc, code, sizeof code);
        if (!symbolizer_line(s->sym, x->pc, line, sizeof line))
            line[0] = '\0';
        fputs(i ? ",\n{" : "\n{", out);
        json_addr(out, "pc", x->pc);
        fputs(", \"code\": ", out);
        json_str(out, code);
        fputs(", \"line\": ", out);
        json_str(out, line);
        fprintf(out, ", \"accesses\": %" PRIu64 ", \"d1_misses\": %" PRIu64
                     ", \"ll_misses\": %" PRIu64 "}", x->accesses, x->d1, x->ll);
    }
    fputs("]}\n", out);
}

int cachesim_report(memtap_trace *t, symbolizer *sym,
                    const cachesim_options *opt, FILE *out)
{
    sim s;
    memset(&s, 0, sizeof s);
    s.gen = 1;
    s.line_shift = (unsigned)__builtin_ctz(opt->d1.line);
    s.sym = sym;
    s.names = namer_create(sym, 0);
    s.recent = calloc(ADDR_CACHE, sizeof *s.recent);
    int rc = 1;
    s.clock.cap = 1u << 10; /* grows with the lines live */
    s.clock.tree = calloc((size_t)s.clock.cap + 1, sizeof *s.clock.tree);
    if (s.names && s.recent && s.clock.tree && level_init(&s.d1, &opt->d1) == 0 &&
        level_init(&s.ll, &opt->ll) == 0 &&
        full_init(&s.full, (uint32_t)(opt->d1.size / opt->d1.line)) == 0) {
        trace_tool tool = { &s, NULL, take, NULL };
        rc = trace_tools_walk(t, &tool, 1, NULL, NULL);
        if (rc == 0 && opt->json)
            print_json(&s, opt, out);
        else if (rc == 0)
            print_report(&s, opt, out);
    }
    for (size_t i = 0; i < s.nobjects; i++)
        free(s.objects[i].name);
    free(s.objects);
    free(s.insns);
    index_free(&s.by_pc);
    index_free(&s.seen);
    index_free(&s.by_name);
    level_free(&s.d1);
    level_free(&s.ll);
    full_free(&s.full);
    free(s.clock.tree);
    free(s.recent);
    namer_destroy(s.names);
    return rc;
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
