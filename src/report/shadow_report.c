/*
 * shadow_report.c - the reports of the shadow-memory tools: reads the summary
 * records heat, share and uninit wrote into a trace, names their addresses
 * as the heap and the symbols were when each record was written, and
 * prints the hottest data, the shared and falsely shared cache lines, or
 * the uninitialized reads.
 */
#define _GNU_SOURCE
#include "report/shadow_report.h"
#include "trace/tool.h"
#include "sys/page.h"

#include "report/json.h"
#include "symbols/namer.h"
#include "sys/vec.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define LINE 64u
#define NAME_CAP 512

typedef struct item {
    uint64_t addr;
    uint64_t count;     /* heat: accesses; uninit: bytes never written */
    uint64_t aux;       /* share: thread bits; uninit: pc */
    uint64_t size;
    uint64_t start;     /* uninit: where the read starts */
    char *name;
    char *object;       /* the object of name (NULL in copies) */
    const char *region;
} item;

typedef struct items {
    item *v;
    size_t n, cap;
} items;

static int push(items *a, const item *it)
{
    item *e = array_push((void **)&a->v, &a->n, &a->cap, sizeof *e);
    if (!e)
        return -1;
    *e = *it;
    return 0;
}

static void item_free(item *it)
{
    free(it->name);
    free(it->object);
}

static void items_free(items *a)
{
    for (size_t i = 0; i < a->n; i++)
        item_free(&a->v[i]);
    free(a->v);
}

static int by_count_desc(const void *x, const void *y)
{
    const item *a = x, *b = y;
    if (a->count != b->count)
        return a->count < b->count ? 1 : -1;
    return a->addr < b->addr ? -1 : a->addr > b->addr;
}

static int by_addr(const void *x, const void *y)
{
    const item *a = x, *b = y;
    return a->addr < b->addr ? -1 : a->addr > b->addr;
}

static int by_addr_then_count(const void *x, const void *y)
{
    const item *a = x, *b = y;
    if (a->addr != b->addr)
        return a->addr < b->addr ? -1 : 1;
    return a->count < b->count ? 1 : a->count > b->count ? -1 : 0;
}

static int by_name(const void *x, const void *y)
{
    return strcmp(((const item *)x)->name, ((const item *)y)->name);
}

static double share_of(uint64_t n, uint64_t total)
{
    return total ? 100.0 * (double)n / (double)total : 0.0;
}

/* Sums items that share a key (after sorting by it) into the first. */
static size_t merge(item *v, size_t n, int (*same)(const item *, const item *))
{
    size_t out = 0;
    for (size_t i = 0; i < n; i++) {
        if (out && same(&v[out - 1], &v[i])) {
            v[out - 1].count += v[i].count;
            item_free(&v[i]);
        } else {
            v[out++] = v[i];
        }
    }
    return out;
}

static int same_name(const item *a, const item *b)
{
    return strcmp(a->name, b->name) == 0;
}

static int same_addr(const item *a, const item *b) { return a->addr == b->addr; }

/* A copy of v whose addresses are rounded down to `grain`, summed. */
static item *aggregate(const items *src, uint64_t grain, size_t *n)
{
    item *v = malloc((src->n ? src->n : 1) * sizeof *v);
    if (!v)
        return NULL;
    for (size_t i = 0; i < src->n; i++) {
        v[i] = src->v[i];
        v[i].addr &= ~(grain - 1);
        v[i].name = strdup(src->v[i].name);
        v[i].object = NULL;
    }
    qsort(v, src->n, sizeof *v, by_addr_then_count);
    *n = merge(v, src->n, same_addr); /* each keeps its hottest part's name */
    qsort(v, *n, sizeof *v, by_count_desc);
    return v;
}

static void free_array(item *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        item_free(&v[i]);
    free(v);
}

/* ---- reading the records ---- */

typedef struct reading {
    namer *names;
    symbolizer *sym;
    items found;
    items totals;           /* uninit: per-instruction counts */
    uint32_t tids[32];      /* share: thread index -> tid */
    uint32_t threads;
    uint64_t chunk;
} reading;

/* One event read (a tool's, trace/tool.h); 1 when out of memory. */
static int take(void *self, const memtap_event *ev)
{
    reading *rd = self;
    const memtap_record *x = &ev->rec;
    char name[NAME_CAP];
    item it;
    memset(&it, 0, sizeof it);
    switch (x->kind) {
    case MEMTAP_EV_SHADOW_THREAD:
        if (x->aux < 32)
            rd->tids[x->aux] = ev->tid;
        if (x->aux + 1 > rd->threads)
            rd->threads = (uint32_t)x->aux + 1;
        return 0;
    case MEMTAP_EV_UNINIT_TOTAL:
        it.aux = x->pc;
        it.count = x->aux;
        it.name = strdup("");
        return it.name ? -push(&rd->totals, &it) : 1;
    case MEMTAP_EV_HEAT:
        rd->chunk = x->size;
        /* fall through */
    case MEMTAP_EV_SHARE:
    case MEMTAP_EV_UNINIT:
        break;
    default:
        namer_learn(rd->names, x, NULL);
        return 0;
    }
    data_name d;
    char object[NAME_CAP];
    namer_data(rd->names, x->addr, &d);
    namer_data_text(rd->names, &d, name, sizeof name);
    namer_object_text(rd->names, &d, object, sizeof object);
    it.region = d.region;
    it.object = strdup(object);
    it.addr = x->addr;
    it.size = x->size;
    it.start = x->addr2;
    it.count = x->kind == MEMTAP_EV_SHARE ? 1 : x->aux;
    it.aux = x->kind == MEMTAP_EV_SHARE ? x->aux : x->pc;
    it.name = strdup(name);
    if (it.name && it.object && push(&rd->found, &it) == 0)
        return 0;
    item_free(&it);
    return 1;
}

/* ---- heat ---- */

static void heat_table(FILE *o, const char *title, const item *v, size_t n,
                       unsigned top, uint64_t total, int with_region, int json)
{
    if (json) { /* title is the key */
        fprintf(o, ",\n  \"%s\": [", title);
        for (size_t i = 0; i < n && i < top; i++) {
            fprintf(o, "%s\n    {", i ? "," : "");
            json_addr(o, "address", v[i].addr);
            fprintf(o, ", \"accesses\": %" PRIu64 ", \"share\": %.2f, "
                       "\"name\": ",
                    v[i].count, share_of(v[i].count, total));
            json_str(o, v[i].name);
            if (with_region) {
                fputs(", \"region\": ", o);
                json_str(o, v[i].region);
            }
            fputc('}', o);
        }
        fputs(n ? "\n  ]" : "]", o);
        return;
    }
    if (!n)
        return;
    fprintf(o, "\n%s\n  %12s  %6s  %-18s  %s\n", title, "accesses", "share",
            "address", with_region ? "region  hottest part" : "name");
    for (size_t i = 0; i < n && i < top; i++)
        fprintf(o, "  %12" PRIu64 "  %5.1f%%  0x%016" PRIx64 "  %s%s%s\n",
                v[i].count, share_of(v[i].count, total), v[i].addr,
                with_region ? v[i].region : "", with_region ? "  " : "",
                v[i].name);
}

static int report_heat(reading *rd, const tool_report_options *opt, FILE *o)
{
    items *f = &rd->found;
    uint64_t total = 0;
    for (size_t i = 0; i < f->n; i++)
        total += f->v[i].count;
    size_t nchunks = 0;
    item *chunks = f->n ? aggregate(f, rd->chunk, &nchunks) : NULL;
    if (f->n && !chunks)
        return -1;
    int json = opt->json;
    if (json)
        fprintf(o, "{\n  \"tool\": \"heat\", \"accesses\": %" PRIu64
                   ", \"chunks\": %zu, \"chunk_bytes\": %" PRIu64,
                total, nchunks, rd->chunk);
    else
        fprintf(o, "memtap heat: %" PRIu64 " accesses to %zu chunks of %"
                   PRIu64 " bytes\n",
                total, nchunks, rd->chunk);
    if (!f->n) {
        if (json)
            fputs("\n}\n", o);
        return 0;
    }
    /* by object: each word's accesses to the object it lies in */
    items objs = { 0, 0, 0 };
    for (size_t i = 0; i < f->n; i++) {
        item it = f->v[i];
        it.name = strdup(f->v[i].object);
        it.object = NULL;
        if (!it.name || push(&objs, &it)) {
            free(it.name);
            return -1;
        }
    }
    qsort(objs.v, objs.n, sizeof *objs.v, by_name);
    objs.n = merge(objs.v, objs.n, same_name);
    qsort(objs.v, objs.n, sizeof *objs.v, by_count_desc);
    if (json)
        fputs(",\n  \"objects\": [", o);
    else
        fprintf(o, "\nhottest objects\n  %12s  %6s  %s\n", "accesses",
                "share", "object");
    for (size_t i = 0; i < objs.n && i < opt->top; i++) {
        if (!json) {
            fprintf(o, "  %12" PRIu64 "  %5.1f%%  %s %s\n", objs.v[i].count,
                    share_of(objs.v[i].count, total), objs.v[i].name,
                    objs.v[i].region);
            continue;
        }
        fprintf(o, "%s\n    {\"object\": ", i ? "," : "");
        json_str(o, objs.v[i].name);
        fputs(", \"region\": ", o);
        json_str(o, objs.v[i].region);
        fprintf(o, ", \"accesses\": %" PRIu64 ", \"share\": %.2f}",
                objs.v[i].count, share_of(objs.v[i].count, total));
    }
    if (json)
        fputs("\n  ]", o);
    items_free(&objs);

    /* chunks (one may hold several objects, at once or over time): each
     * named after its hottest word */
    heat_table(o, json ? "hottest_chunks" : "hottest chunks", chunks, nchunks,
               opt->top, total, 0, json);
    free_array(chunks, nchunks);
    size_t n;
    if (rd->chunk <= LINE) {
        item *lines = aggregate(f, LINE, &n);
        if (!lines)
            return -1;
        heat_table(o, json ? "hottest_lines" : "hottest cache lines (64 bytes)",
                   lines, n, opt->top, total, 0, json);
        free_array(lines, n);
    }
    if (rd->chunk <= PAGE) {
        item *pages = aggregate(f, PAGE, &n);
        if (!pages)
            return -1;
        heat_table(o, json ? "hottest_pages" : "hottest pages (4096 bytes)",
                   pages, n, opt->top, total, 1, json);
        free_array(pages, n);
    }
    if (json)
        fputs("\n}\n", o);
    return 0;
}

/* ---- share ---- */

/* Thread bits name thread states; a thread whose state was remade (events
 * after its exit) has two.  These merge bits of one thread. */
typedef struct thread_set {
    uint32_t tids[32];
    uint32_t masks[32];     /* bits of each distinct thread */
    unsigned n;
} thread_set;

static void threads_of(const reading *rd, thread_set *ts)
{
    memset(ts, 0, sizeof *ts);
    for (unsigned b = 0; b < 32; b++) {
        uint32_t tid = rd->tids[b] ? rd->tids[b] : 0x80000000u | b;
        unsigned k = 0;
        while (k < ts->n && ts->tids[k] != tid)
            k++;
        if (k == ts->n)
            ts->tids[ts->n++] = tid;
        ts->masks[k] |= 1u << b;
    }
}

static unsigned thread_count(const thread_set *ts, uint32_t bits)
{
    unsigned n = 0;
    for (unsigned k = 0; k < ts->n; k++)
        n += (bits & ts->masks[k]) != 0;
    return n;
}

/* The threads of bits: "12,13" (text) or [12, 13] (JSON); a thread
 * whose id no record gave is "#INDEX". */
static void thread_list(FILE *o, const thread_set *ts, uint32_t bits,
                        int json)
{
    const char *sep = "";
    if (json)
        fputc('[', o);
    for (unsigned k = 0; k < ts->n; k++) {
        if (!(bits & ts->masks[k]))
            continue;
        if (ts->tids[k] & 0x80000000u)
            fprintf(o, json ? "%s\"#%u\"" : "%s#%u", sep, ts->tids[k] & 31);
        else
            fprintf(o, "%s%u", sep, ts->tids[k]);
        sep = json ? ", " : ",";
    }
    if (json)
        fputc(']', o);
    else if (!*sep)
        fputc('-', o);
}

/* Falsely shared: two threads that each write a word of the line the
 * other does not write. */
static int falsely_shared(const thread_set *ts, const item *w, size_t n)
{
    for (unsigned a = 0; a < ts->n; a++) {
        for (unsigned b = a + 1; b < ts->n; b++) {
            int a_only = 0, b_only = 0;
            for (size_t k = 0; k < n; k++) {
                uint32_t wr = (uint32_t)(w[k].aux >> 32);
                int wa = (wr & ts->masks[a]) != 0, wb = (wr & ts->masks[b]) != 0;
                a_only |= wa && !wb;
                b_only |= wb && !wa;
            }
            if (a_only && b_only)
                return 1;
        }
    }
    return 0;
}

static void print_word(FILE *o, const thread_set *ts, const item *w,
                       int json)
{
    if (json) {
        fputc('{', o);
        json_addr(o, "address", w->addr);
        fputs(", \"name\": ", o);
        json_str(o, w->name);
        fputs(", \"accessed_by\": ", o);
        thread_list(o, ts, (uint32_t)w->aux, 1);
        fputs(", \"written_by\": ", o);
        thread_list(o, ts, (uint32_t)(w->aux >> 32), 1);
        fputc('}', o);
        return;
    }
    fprintf(o, "    0x%016" PRIx64 "  %-36s  accessed by ", w->addr, w->name);
    thread_list(o, ts, (uint32_t)w->aux, 0);
    fputs("; written by ", o);
    thread_list(o, ts, (uint32_t)(w->aux >> 32), 0);
    fputc('\n', o);
}

/* A falsely shared line and its words; `more`: not the first (JSON). */
static void print_line(FILE *o, const thread_set *ts, const item *w,
                       size_t n, uint64_t line, int json, int more)
{
    if (!json) {
        fprintf(o, "  line 0x%016" PRIx64 " %s\n", line, w->region);
        for (size_t k = 0; k < n; k++)
            print_word(o, ts, &w[k], 0);
        return;
    }
    fprintf(o, "%s\n    {", more ? "," : "");
    json_addr(o, "line", line);
    fputs(", \"region\": ", o);
    json_str(o, w->region);
    fputs(", \"words\": [", o);
    for (size_t k = 0; k < n; k++) {
        fputs(k ? ", " : "", o);
        print_word(o, ts, &w[k], 1);
    }
    fputs("]}", o);
}

static int report_share(reading *rd, const tool_report_options *opt, FILE *o)
{
    items *f = &rd->found;
    int json = opt->json;
    thread_set ts;
    threads_of(rd, &ts);
    qsort(f->v, f->n, sizeof *f->v, by_addr);
    size_t shared_words = 0, lines = 0, false_lines = 0;
    for (size_t i = 0; i < f->n; i++)
        shared_words += thread_count(&ts, (uint32_t)f->v[i].aux) > 1;
    /* lines: runs of words with the same line address */
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1)
            fputs(json ? ",\n  \"falsely_shared\": ["
                       : "\nfalsely shared cache lines (written by several "
                         "threads at different words)\n", o);
        size_t shown = 0;
        for (size_t i = 0; i < f->n;) {
            size_t j = i;
            while (j < f->n && (f->v[j].addr & ~(uint64_t)(LINE - 1)) ==
                                   (f->v[i].addr & ~(uint64_t)(LINE - 1)))
                j++;
            int fs = falsely_shared(&ts, f->v + i, j - i);
            uint64_t line = f->v[i].addr & ~(uint64_t)(LINE - 1);
            if (pass == 0) {
                lines++;
                false_lines += fs;
            } else if (fs && shown++ < opt->top) {
                print_line(o, &ts, f->v + i, j - i, line, json, shown > 1);
            }
            i = j;
        }
        unsigned threads = thread_count(&ts, rd->threads >= 32
                                                 ? ~0u
                                                 : (1u << rd->threads) - 1);
        if (pass == 0 && json)
            fprintf(o, "{\n  \"tool\": \"share\", \"threads\": %u, "
                       "\"lines_shared\": %zu, \"words_shared\": %zu, "
                       "\"lines_falsely_shared\": %zu",
                    threads, lines, shared_words, false_lines);
        else if (pass == 0)
            fprintf(o, "memtap share: %u threads; %zu cache lines touched by "
                       "more than one thread; %zu words shared; %zu cache "
                       "lines falsely shared\n",
                    threads, lines, shared_words, false_lines);
        else if (json)
            fputs(shown ? "\n  ]" : "]", o);
        else if (!shown)
            fprintf(o, "  none\n");
    }
    fputs(json ? ",\n  \"shared_words\": ["
               : "\nshared words (accessed by more than one thread)\n", o);
    size_t shown = 0;
    for (size_t i = 0; i < f->n; i++) {
        if (thread_count(&ts, (uint32_t)f->v[i].aux) < 2 || shown++ >= opt->top)
            continue;
        fputs(json ? (shown > 1 ? ",\n    " : "\n    ") : "", o);
        print_word(o, &ts, &f->v[i], json);
    }
    if (json)
        fputs(shown ? "\n  ]\n}\n" : "]\n}\n", o);
    else if (!shown)
        fprintf(o, "  none\n");
    return 0;
}

/* ---- uninit ---- */

static uint64_t total_of(const reading *rd, uint64_t pc)
{
    uint64_t n = 0;
    for (size_t i = 0; i < rd->totals.n; i++)
        if (rd->totals.v[i].aux == pc && rd->totals.v[i].count > n)
            n = rd->totals.v[i].count; /* the last write is the largest */
    return n;
}

static int report_uninit(reading *rd, const tool_report_options *opt, FILE *o)
{
    items *f = &rd->found;
    uint64_t reads = 0;
    for (size_t i = 0; i < f->n; i++)
        reads += total_of(rd, f->v[i].aux);
    int json = opt->json;
    if (json)
        fprintf(o, "{\n  \"tool\": \"uninit\", \"instructions\": %zu, "
                   "\"reads\": %" PRIu64 ",\n  \"sites\": [",
                f->n, reads);
    else
        fprintf(o, "memtap uninit: %zu instructions read heap memory that "
                   "was never written (%" PRIu64 " reads)\n",
                f->n, reads);
    for (size_t i = 0; i < f->n && i < opt->top; i++) {
        const item *u = &f->v[i];
        char code[NAME_CAP], line[NAME_CAP];
        symbolizer_code(rd->sym, u->aux, code, sizeof code);
        int has_line = symbolizer_line(rd->sym, u->aux, line, sizeof line);
        uint64_t times = total_of(rd, u->aux);
        if (!json) {
            fprintf(o, "  %s%s%s%s reads %" PRIu64 " bytes at 0x%" PRIx64
                       ": %" PRIu64 " never written, first at %s %s; %"
                       PRIu64 " time%s\n",
                    code, has_line ? " (" : "", has_line ? line : "",
                    has_line ? ")" : "", u->size, u->start, u->count,
                    u->name, u->region, times, times == 1 ? "" : "s");
            continue;
        }
        fprintf(o, "%s\n    {\"instruction\": ", i ? "," : "");
        json_str(o, code);
        fputs(", \"line\": ", o);
        if (has_line)
            json_str(o, line);
        else
            fputs("null", o);
        fputs(", ", o);
        json_addr(o, "pc", u->aux);
        fprintf(o, ", \"size\": %" PRIu64 ", ", u->size);
        json_addr(o, "address", u->start);
        fprintf(o, ", \"never_written\": %" PRIu64 ", ", u->count);
        json_addr(o, "first", u->addr);
        fputs(", \"first_name\": ", o);
        json_str(o, u->name);
        fputs(", \"region\": ", o);
        json_str(o, u->region);
        fprintf(o, ", \"times\": %" PRIu64 "}", times);
    }
    if (json)
        fputs(f->n ? "\n  ]\n}\n" : "]\n}\n", o);
    return 0;
}

/* The report the options ask for: 0, or -1 when out of memory. */
static int report(reading *rd, const tool_report_options *opt, FILE *o)
{
    int (*fn)(reading *, const tool_report_options *, FILE *) =
        !strcmp(opt->tool, "heat") ? report_heat
        : !strcmp(opt->tool, "share") ? report_share : report_uninit;
    return fn(rd, opt, o);
}

int tool_report(memtap_trace *t, symbolizer *sym,
                const tool_report_options *opt, FILE *out)
{
    reading rd = { .sym = sym, .chunk = opt->chunk,
                   .names = namer_create(sym, 0) };
    if (!rd.names)
        return MEMTAP_E_NOMEM;
    trace_tool tool = { .self = &rd, .event = take };
    int rc = trace_tools_walk(t, &tool, 1, NULL, NULL);
    if (rc > 0 || (rc == 0 && report(&rd, opt, out) != 0))
        rc = MEMTAP_E_NOMEM; /* take's, or the report's */
    items_free(&rd.found);
    items_free(&rd.totals);
    namer_destroy(rd.names);
    return rc;
}
