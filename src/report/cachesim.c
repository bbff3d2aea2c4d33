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

#define REUSE_BINS 40 /* 0, 1, 2-3, 4-7, ... distinct lines between uses */

typedef struct object_stats {
    char *name;
    uint64_t accesses, d1, ll, compulsory, capacity, conflict;
    uint64_t reuse[REUSE_BINS];
} object_stats;

typedef struct insn_stats {
    uint64_t pc;
    uint64_t accesses, d1, ll;
} insn_stats;

typedef struct named {
    uint64_t addr, gen;  /* gen 0: empty */
    uint32_t object;
} named;

typedef struct sim {
    cache_level d1, ll;
    cache_full full;
    unsigned line_shift;
    symbolizer *sym;
    namer *names;
    uint64_t gen;        /* heap events so far + 1: names change with them */
    named *recent;
    struct {             /* the last object found, over its whole extent */
        uint64_t lo, hi, gen;
        uint32_t object;
    } span;
    reuse_clock clock;   /* also knows the lines touched */
    index_map by_name;
    object_stats *objects;
    size_t nobjects, objects_cap;
    index_map by_pc;
    insn_stats *insns;
    size_t ninsns, insns_cap;
    uint64_t accesses, reads, writes, d1_misses, ll_misses, compulsory;
    uint64_t capacity, conflict;
} sim;

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
    int64_t distance = reuse_clock_use(&s->clock, line);
    if (distance == -2)
        return 1;
    int first = distance < 0;
    int d1_hit = cache_level_access(&s->d1, line);
    int ll_hit = d1_hit || cache_level_access(&s->ll, line);
    int full_hit = cache_full_access(&s->full, line);
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
    if (s.names && s.recent && reuse_clock_init(&s.clock) == 0 &&
        cache_level_init(&s.d1, &opt->d1) == 0 &&
        cache_level_init(&s.ll, &opt->ll) == 0 &&
        cache_full_init(&s.full, (uint32_t)(opt->d1.size / opt->d1.line)) == 0) {
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
    index_free(&s.by_name);
    cache_level_free(&s.d1);
    cache_level_free(&s.ll);
    cache_full_free(&s.full);
    reuse_clock_free(&s.clock);
    free(s.recent);
    namer_destroy(s.names);
    return rc;
}
