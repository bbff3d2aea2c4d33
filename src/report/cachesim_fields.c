/*
 * cachesim_fields.c - names of the cache model's fields, added up by name
 * (cachesim_fields.h).
 */
#include "report/cachesim_fields.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME_CAP 512

/* Leaves the indices out of name's arrays ("recs[12].key" ->
 * "recs[].key"), and with `offset`, a trailing offset ("gzip:.bss+88" ->
 * "gzip:.bss"). */
static void general(char *name, int offset)
{
    char *o = name;
    for (const char *p = name; *p;) {
        if (*p == '[' && p[1] >= '0' && p[1] <= '9') {
            const char *q = p + 1 + strspn(p + 1, "0123456789");
            if (*q == ']') {
                memcpy(o, "[]", 2);
                o += 2;
                p = q + 1;
                continue;
            }
        }
        *o++ = *p++;
    }
    *o = '\0';
    char *plus = offset ? strrchr(name, '+') : NULL;
    if (plus && plus > name && plus[1] &&
        strspn(plus + 1, "0123456789abcdefx") == strlen(plus + 1))
        *plus = '\0';
}

/* The name of field f. */
static void field_name(const field_stats *f, char *const *object_names, symbolizer *sym,
                       namer *names, char *buf, size_t cap)
{
    if (!(f->key & FIELD_HEAP)) {
        data_name d;
        namer_data(names, f->key, &d);
        namer_data_text(names, &d, buf, cap);
        general(buf, 1);
        return;
    }
    const char *site =
        object_names[(f->key & ~FIELD_HEAP) >> FIELD_OFFSET_BITS];
    uint64_t off = f->key & (FIELD_BLOCK_MAX - 1);
    symbolizer_type t;
    char member[256];
    if (symbolizer_block_type(sym, f->block.site, f->block.size, &t) &&
        symbolizer_member(sym, &t, f->block.size, off, member, sizeof member)) {
        general(member, 0);
        snprintf(buf, cap, "%s %s", site, member);
    } else {
        snprintf(buf, cap, "%s +%" PRIu64, site, off);
    }
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const cachesim_field *)a)->name, ((const cachesim_field *)b)->name);
}

static int by_d1(const void *a, const void *b)
{
    const cachesim_field *x = a, *y = b;
    if (x->d1 != y->d1)
        return x->d1 < y->d1 ? 1 : -1;
    return strcmp(x->name, y->name);
}

int cachesim_fields_name(const field_stats *f, size_t n, char *const *object_names,
                         symbolizer *sym, namer *names, cachesim_field **out,
                         size_t *nout)
{
    cachesim_field *rows = calloc(n ? n : 1, sizeof *rows);
    if (!rows)
        return -1;
    for (size_t i = 0; i < n; i++) {
        char name[NAME_CAP];
        field_name(&f[i], object_names, sym, names, name, sizeof name);
        rows[i] = (cachesim_field){ strdup(name), f[i].accesses, f[i].d1, f[i].ll };
        if (!rows[i].name) {
            cachesim_fields_free(rows, i);
            return -1;
        }
    }
    qsort(rows, n, sizeof *rows, by_name);
    size_t k = 0; /* rows of one name added into the first of them */
    for (size_t i = 0; i < n; i++) {
        if (k && !strcmp(rows[k - 1].name, rows[i].name)) {
            rows[k - 1].accesses += rows[i].accesses;
            rows[k - 1].d1 += rows[i].d1;
            rows[k - 1].ll += rows[i].ll;
            free(rows[i].name);
        } else {
            rows[k++] = rows[i];
        }
    }
    qsort(rows, k, sizeof *rows, by_d1);
    *out = rows;
    *nout = k;
    return 0;
}

void cachesim_fields_free(cachesim_field *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(f[i].name);
    free(f);
}
