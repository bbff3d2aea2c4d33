/*
 * accuracy.c - measured accuracy of selective instrumentation: the
 * accesses a selective trace recovers, chunk by chunk, against the
 * non-selective trace of a run with the same input.
 *
 * The two runs are different processes of different files (address
 * randomization, and a heap that starts after each file's own segment), so
 * a chunk is named, not numbered: the object its address falls in (a
 * variable, a heap block by allocation number and site, a region) and the
 * chunk index of the offset within it.  The stack has no such names (its
 * frames move with the environment and the randomized stack top): it counts
 * as one chunk.
 */
#define _GNU_SOURCE
#include "report/accuracy.h"
#include "trace/info.h"
#include "trace/tool.h"

#include "report/index.h"
#include "symbols/namer.h"
#include "sys/vec.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define NAME_CAP 512
#define CACHE 4096

/* Accesses per chunk name: an index into growing counts. */
typedef struct table {
    index_map names;
    uint64_t (*n)[2];          /* accesses: full trace, selective trace */
    size_t count, cap;
} table;

/* The counts of the chunk called key, added on first sight; NULL when out
 * of memory. */
static uint64_t *counts_of(table *t, const char *key)
{
    int64_t i = index_get_str(&t->names, key);
    if (i >= 0)
        return t->n[i];
    uint64_t *n = array_push((void **)&t->n, &t->count, &t->cap, sizeof *t->n);
    if (!n || index_put_str(&t->names, key, (uint32_t)(t->count - 1)) != 0)
        return NULL;
    return n;
}

/* name with the program's file name, where it names the file ("[p.sel]",
 * "p.sel:.data", "@p.sel+0x..."), replaced by "<program>". */
static void canonical(const char *name, const char *prog, char *out,
                      size_t cap)
{
    size_t plen = prog ? strlen(prog) : 0, n = 0;
    for (const char *p = name; *p && n + 1 < cap;) {
        char before = p == name ? '\0' : p[-1];
        char after = plen ? p[plen] : '\0';
        if (plen && strncmp(p, prog, plen) == 0 &&
            (before == '\0' || before == '[' || before == '@') &&
            (after == ']' || after == ':' || after == '+')) {
            n += (size_t)snprintf(out + n, cap - n, "<program>");
            p += plen;
            continue;
        }
        out[n++] = *p++;
    }
    out[n < cap ? n : cap - 1] = '\0';
}

/* "object#chunk": the object of d (canonical, see below) and the chunk
 * its offset falls in; the stack is one chunk. */
static void chunk_key(namer *n, const data_name *d, const char *prog,
                      uint64_t chunk, char *out, size_t cap)
{
    char object[NAME_CAP], same[NAME_CAP];
    namer_object_text(n, d, object, sizeof object);
    canonical(object, prog, same, sizeof same);
    int stack = d->kind == DATA_REGION && strcmp(d->region, "[stack]") == 0;
    snprintf(out, cap, "%s#%" PRIu64, same,
             stack || d->kind == DATA_UNKNOWN ? 0 : (d->addr - d->start) / chunk);
}

/* A name found for an address, valid while the heap stays as it was
 * (gen: heap events seen when it was found). */
typedef struct cached {
    uint64_t addr, gen;
    char key[NAME_CAP + 24];
} cached;

/* One trace's walk (a tool of the offline interface, trace/tool.h). */
typedef struct adding {
    namer *n;
    cached *cache;
    const char *prog;
    uint64_t chunk;
    uint64_t gen;        /* cache entries of other generations are stale */
    table *t;
    int col;
} adding;

/* Counts an access to its chunk; 1 when out of memory. */
static int add_event(void *self, const memtap_event *ev)
{
    adding *a = self;
    const memtap_record *x = &ev->rec;
    if (x->kind != MEMTAP_EV_LOAD && x->kind != MEMTAP_EV_STORE) {
        if (heap_map_kind(x->kind)) { /* names change */
            namer_learn(a->n, x, NULL);
            a->gen++;
        }
        return 0;
    }
    cached *c = &a->cache[(x->addr >> 3) & (CACHE - 1)];
    if (c->gen != a->gen || c->addr != x->addr) {
        c->gen = a->gen;
        data_name d;
        namer_data(a->n, x->addr, &d);
        chunk_key(a->n, &d, a->prog, a->chunk, c->key, sizeof c->key);
        c->addr = x->addr;
    }
    uint64_t *counts = counts_of(a->t, c->key);
    if (!counts)
        return 1;
    counts[a->col] += x->count ? x->count : 1;
    return 0;
}

/* Adds the trace's accesses (with their counts) to column col. */
static int add_trace(const char *path, int col, uint64_t chunk, table *t,
                     char *err, size_t cap)
{
    memtap_trace *tr;
    int rc = memtap_trace_open(path, &tr);
    if (rc != MEMTAP_OK) {
        snprintf(err, cap, "%s: %s", path, memtap_status_string(rc));
        return -1;
    }
    symbolizer *sym = NULL;
    adding a = { NULL, calloc(CACHE, sizeof(cached)), trace_program_name(tr), chunk,
                 1, t, col };
    if (symbolizer_create(tr, NULL, &sym) == MEMTAP_OK)
        a.n = namer_create(sym, 0);
    rc = a.n && a.cache ? 0 : 1;
    if (!rc) {
        trace_tool tool = { .self = &a, .event = add_event };
        rc = trace_tools_walk(tr, &tool, 1, NULL, NULL);
    }
    if (rc > 0)
        snprintf(err, cap, "out of memory");
    else if (rc < 0)
        snprintf(err, cap, "%s: %s", path, memtap_status_string(rc));
    free(a.cache);
    namer_destroy(a.n);
    symbolizer_destroy(sym);
    memtap_trace_close(tr);
    return rc ? -1 : 0;
}

int accuracy_compare(const char *selective, const char *full, uint64_t chunk,
                     accuracy_result *out, char *err, size_t cap)
{
    memset(out, 0, sizeof *out);
    table t;
    memset(&t, 0, sizeof t);
    int rc = add_trace(full, 0, chunk, &t, err, cap);
    if (!rc)
        rc = add_trace(selective, 1, chunk, &t, err, cap);
    for (size_t i = 0; i < t.count; i++) {
        const uint64_t *n = t.n[i];
        if (n[0]) {
            out->chunks++;
            out->accesses += n[0];
            out->recovered += n[1] < n[0] ? n[1] : n[0];
            out->chunks_found += n[1] > 0;
        } else {
            out->unmatched += n[1];
        }
        out->selective += n[1];
    }
    index_free(&t.names);
    free(t.n);
    return rc;
}
