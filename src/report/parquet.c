/*
 * parquet.c - a Parquet file writer (parquet.h): the row group in
 * memory, the dictionaries of its columns, its column chunks' pages
 * (encoded by parquet_encode.c) and the footer with each chunk's place
 * and statistics.
 *
 * One file: a row's values go into the columns' arrays and dictionaries,
 * which a full row group's pages are made of and reset after, and the
 * footer is the record of those pages; all of them share the column.
 */
#include "report/parquet.h"

#include "report/parquet_encode.h"
#include "sys/hash.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

/* parquet.thrift's numbers */
enum { T_INT32 = 1, T_INT64 = 2, T_BYTE_ARRAY = 6 };                 /* Type */
enum { CT_UTF8 = 0, CT_UINT_32 = 13, CT_UINT_64 = 14 };              /* ConvertedType */
enum { REQUIRED = 0, OPTIONAL = 1 };                                 /* FieldRepetitionType */
enum { E_PLAIN = 0, E_RLE = 3, E_DELTA_BINARY_PACKED = 5,             /* Encoding */
       E_RLE_DICTIONARY = 8 };
enum { CODEC_ZSTD = 6 };                                             /* CompressionCodec */
enum { PAGE_DATA = 0, PAGE_DICTIONARY = 2 };                         /* PageType */

#define ZSTD_LEVEL 1

/* A number column's encodings, each tried in turn: a dictionary while
 * its values are few; else delta-packing while it packs to a quarter of
 * the plain bytes (a sequence number; addresses, whose deltas zstd finds
 * less to compress in than their plain bytes, are not); else plain.  A
 * column that gave one up does not try it again. */
enum { FORM_DICT, FORM_DELTA, FORM_PLAIN };

/* ---- the file ---- */

/* Where a column chunk of a row group went, for the footer. */
typedef struct chunk_meta {
    uint64_t dict_at, data_at;   /* page offsets; dict_at 0: none */
    uint64_t raw, packed;        /* bytes, headers included */
    int encoding;                /* the data page's */
    uint64_t values;             /* rows that have one (the others NULL) */
    uint64_t min, max;           /* a number column's (when values) */
} chunk_meta;

typedef struct column {
    pq_column def;
    uint64_t *v;                 /* a row's number, or its string's entry */
    uint8_t *valid;              /* optional columns: a row's value is there */
    uint32_t nulls;              /* ... the group's rows that have none */
    /* a string column's dictionary of the row group */
    pq_bytes text;                  /* the entries' bytes, one after another */
    uint32_t *at, *len;          /* each entry's */
    size_t nent, ent_cap;
    uint32_t *table;             /* open addressing: entry + 1; 0: empty */
    size_t table_size;
    uint32_t last;               /* the entry of the row before + 1 */
    struct key_slot {            /* keys seen lately (pq_keyed) */
        uint64_t key;
        uint32_t entry;          /* + 1; 0: none */
    } *keys;
    int form;                    /* a number column's: FORM_* tried first */
} column;

/* What the files share: zstd's context and the scratch a column chunk
 * is encoded in. */
struct pq_shared {
    pq_bytes raw, packed, page;
    uint64_t *index;             /* a column's values to encode, then
                                    its levels */
    uint32_t rows;               /* the rows it has room for */
    uint64_t *dict;              /* a number column's dictionary */
    uint32_t *dict_table;        /* ... found by value: entry + 1 */
    ZSTD_CCtx *cctx;
};

struct pq_file {
    pq_shared *sh;
    char *path;
    FILE *out;                   /* open while a row group is written */
    uint64_t size;               /* bytes written */
    column *cols;
    size_t ncols;
    uint32_t group_rows, rows;   /* a group's most rows, the current's */
    uint32_t room;               /* rows the columns' arrays hold (they
                                    grow up to group_rows) */
    uint64_t total;
    chunk_meta *meta;            /* ncols a row group */
    uint64_t *group_rows_of;     /* each group's rows */
    size_t ngroups, groups_cap;
    char err[256];
};

static void fail(pq_file *f, const char *fmt, ...)
{
    if (f->err[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->err, sizeof f->err, fmt, ap);
    va_end(ap);
}

/* The file opened to write on (mode "wb" at first, then "ab": a file is
 * open only while a row group or the footer is written, so that an
 * export may write the files of any number of threads at once); 0, or -1
 * (f's error says why). */
static int open_out(pq_file *f, const char *mode)
{
    if (!f->err[0] && !(f->out = fopen(f->path, mode)))
        fail(f, "%s: %s", f->path, strerror(errno));
    return f->out ? 0 : -1;
}

static int close_out(pq_file *f)
{
    if (f->out && fclose(f->out) != 0)
        fail(f, "%s: %s", f->path, strerror(errno));
    f->out = NULL;
    return f->err[0] ? -1 : 0;
}

static void write_out(pq_file *f, const void *p, size_t n)
{
    if (f->err[0])
        return;
    if (fwrite(p, 1, n, f->out) != n)
        fail(f, "%s: %s", f->path, strerror(errno));
    f->size += n;
}

static void free_file(pq_file *f)
{
    for (size_t c = 0; c < f->ncols; c++) {
        column *x = &f->cols[c];
        free(x->v);
        free(x->valid);
        free(x->text.p);
        free(x->at);
        free(x->len);
        free(x->table);
        free(x->keys);
    }
    free(f->cols);
    free(f->meta);
    free(f->group_rows_of);
    free(f->path);
    free(f);
}

pq_shared *pq_shared_create(void)
{
    pq_shared *sh = calloc(1, sizeof *sh);
    if (sh && (!(sh->cctx = ZSTD_createCCtx()) ||
               ZSTD_isError(ZSTD_CCtx_setParameter(sh->cctx, ZSTD_c_compressionLevel,
                                                   ZSTD_LEVEL)))) {
        pq_shared_destroy(sh);
        return NULL;
    }
    return sh;
}

void pq_shared_destroy(pq_shared *sh)
{
    if (!sh)
        return;
    free(sh->raw.p);
    free(sh->packed.p);
    free(sh->page.p);
    free(sh->index);
    free(sh->dict);
    free(sh->dict_table);
    ZSTD_freeCCtx(sh->cctx);
    free(sh);
}

/* The scratch with room for a group of `rows`; 0, or -1 when out of
 * memory. */
static int shared_rows(pq_shared *sh, uint32_t rows)
{
    if (rows <= sh->rows)
        return 0;
    uint64_t *index = realloc(sh->index, 2 * (size_t)rows * sizeof *index);
    if (!index)
        return -1;
    sh->index = index;
    sh->rows = rows;
    return 0;
}

/* The columns' arrays with room for twice the rows (1,024 at first, at
 * most a group's); 0, or -1 when out of memory. */
static int grow_rows(pq_file *f)
{
    uint32_t room = f->room ? 2 * f->room : 1024;
    room = room < f->group_rows ? room : f->group_rows;
    for (size_t c = 0; c < f->ncols; c++) {
        column *x = &f->cols[c];
        uint64_t *v = realloc(x->v, (size_t)room * sizeof *v);
        if (v)
            x->v = v;
        uint8_t *valid = v && x->def.optional ? realloc(x->valid, room) : x->valid;
        if (!v || (x->def.optional && !valid))
            return -1;
        x->valid = valid;
    }
    f->room = room;
    return 0;
}

pq_file *pq_open(pq_shared *sh, const char *path, const pq_column *cols, size_t ncols,
                 uint32_t group_rows, char *err, size_t errcap)
{
    pq_file *f = calloc(1, sizeof *f);
    int ok = f && (f->cols = calloc(ncols, sizeof *f->cols)) && (f->path = strdup(path)) &&
             shared_rows(sh, group_rows) == 0;
    for (size_t c = 0; ok && c < ncols; c++) {
        f->cols[c].def = cols[c];
        f->ncols = c + 1;
    }
    if (ok) {
        f->group_rows = group_rows;
        ok = grow_rows(f) == 0;
    }
    if (!ok) {
        if (f)
            free_file(f);
        snprintf(err, errcap, "out of memory");
        return NULL;
    }
    f->sh = sh;
    if (open_out(f, "wb") == 0)
        write_out(f, "PAR1", 4);
    if (close_out(f) != 0) {
        snprintf(err, errcap, "%s", f->err);
        free_file(f);
        return NULL;
    }
    return f;
}

void pq_u64(pq_file *f, size_t c, uint64_t v)
{
    column *x = &f->cols[c];
    x->v[f->rows] = v;
    if (x->valid)
        x->valid[f->rows] = 1;
}

void pq_null(pq_file *f, size_t c)
{
    f->cols[c].valid[f->rows] = 0;
    f->cols[c].nulls++;
}

/* A hash of the n bytes at s, eight at a time (a string a row: FNV's
 * multiply a byte was a tenth of an export). */
static uint64_t text_hash(const char *s, size_t n)
{
    uint64_t h = n * 0x9E3779B97F4A7C15ull, w;
    for (; n >= 8; s += 8, n -= 8) {
        memcpy(&w, s, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    w = 0;
    memcpy(&w, s, n);
    h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
    return h ^ h >> 29;
}

/* The dictionary's table twice as large (or a first one). */
static int grow_table(column *x)
{
    size_t size = x->table_size ? 2 * x->table_size : 1024;
    uint32_t *t = calloc(size, sizeof *t);
    if (!t)
        return -1;
    for (size_t e = 0; e < x->nent; e++) {
        size_t i = text_hash((const char *)x->text.p + x->at[e], x->len[e]) & (size - 1);
        while (t[i])
            i = (i + 1) & (size - 1);
        t[i] = (uint32_t)e + 1;
    }
    free(x->table);
    x->table = t;
    x->table_size = size;
    return 0;
}

/* Whether entry e of x's dictionary is the n bytes at s. */
static int entry_is(const column *x, uint32_t e, const char *s, size_t n)
{
    return x->len[e] == n && memcmp(x->text.p + x->at[e], s, n) == 0;
}

int pq_str(pq_file *f, size_t c, const char *s, size_t n)
{
    column *x = &f->cols[c];
    if (x->valid)
        x->valid[f->rows] = 1;
    if (x->last && entry_is(x, x->last - 1, s, n)) { /* as the row before */
        x->v[f->rows] = x->last - 1;
        return 0;
    }
    if (2 * (x->nent + 1) > x->table_size && grow_table(x) != 0)
        return -1;
    size_t i = text_hash(s, n) & (x->table_size - 1);
    for (; x->table[i]; i = (i + 1) & (x->table_size - 1))
        if (entry_is(x, x->table[i] - 1, s, n))
            break;
    if (!x->table[i]) {
        if (x->nent == x->ent_cap) {
            size_t cap = x->ent_cap ? 2 * x->ent_cap : 256;
            uint32_t *at = realloc(x->at, cap * sizeof *at);
            if (at)
                x->at = at;
            uint32_t *len = at ? realloc(x->len, cap * sizeof *len) : NULL;
            if (!len)
                return -1;
            x->len = len;
            x->ent_cap = cap;
        }
        if (x->text.n + n > UINT32_MAX)
            return -1;
        x->at[x->nent] = (uint32_t)x->text.n;
        x->len[x->nent] = (uint32_t)n;
        pq_put_bytes(&x->text, s, n);
        if (x->text.bad)
            return -1;
        x->table[i] = (uint32_t)++x->nent;
    }
    x->last = x->table[i];
    x->v[f->rows] = x->last - 1;
    return 0;
}

#define KEY_BITS 8

int pq_keyed(pq_file *f, size_t c, uint64_t key)
{
    column *x = &f->cols[c];
    const struct key_slot *k = x->keys ? &x->keys[fib_hash(key, KEY_BITS)] : NULL;
    if (!k || !k->entry || k->key != key)
        return 0;
    if (x->valid)
        x->valid[f->rows] = 1;
    x->last = k->entry;
    x->v[f->rows] = k->entry - 1;
    return 1;
}

int pq_str_key(pq_file *f, size_t c, uint64_t key, const char *s, size_t n)
{
    column *x = &f->cols[c];
    if (pq_str(f, c, s, n) != 0 ||
        (!x->keys && !(x->keys = calloc(1u << KEY_BITS, sizeof *x->keys))))
        return -1;
    x->keys[fib_hash(key, KEY_BITS)] = (struct key_slot){ key, x->last };
    return 0;
}

/* One page: its header (a PageHeader, PAGE_DATA or PAGE_DICTIONARY, with
 * `values` of `encoding`), then f->sh->raw compressed. */
static void write_page(pq_file *f, int type, uint32_t values, int encoding, chunk_meta *m)
{
    size_t bound = ZSTD_compressBound(f->sh->raw.n);
    f->sh->packed.n = 0;
    uint8_t *z = pq_room(&f->sh->packed, bound);
    size_t zn = z ? ZSTD_compress2(f->sh->cctx, z, bound, f->sh->raw.p, f->sh->raw.n) : 0;
    if (!z || f->sh->raw.bad || ZSTD_isError(zn)) {
        fail(f, "out of memory");
        return;
    }
    if (f->sh->raw.n > INT32_MAX || zn > INT32_MAX) {
        fail(f, "a page of more than 2 GiB");
        return;
    }
    f->sh->page.n = 0;
    pq_thrift t = { .b = &f->sh->page };
    pq_t_i32(&t, 1, type);
    pq_t_i32(&t, 2, (int32_t)f->sh->raw.n);
    pq_t_i32(&t, 3, (int32_t)zn);
    if (type == PAGE_DATA) {
        pq_t_begin(&t, 5); /* DataPageHeader */
        pq_t_i32(&t, 1, (int32_t)values);
        pq_t_i32(&t, 2, encoding);
        pq_t_i32(&t, 3, E_RLE);   /* definition levels */
        pq_t_i32(&t, 4, E_RLE);   /* repetition levels (none) */
        pq_t_end(&t);
    } else {
        pq_t_begin(&t, 7); /* DictionaryPageHeader */
        pq_t_i32(&t, 1, (int32_t)values);
        pq_t_i32(&t, 2, encoding);
        pq_t_end(&t);
    }
    pq_put_byte(&f->sh->page, 0); /* the header's stop */
    if (f->sh->page.bad) {
        fail(f, "out of memory");
        return;
    }
    if (type == PAGE_DATA)
        m->data_at = f->size;
    else
        m->dict_at = f->size;
    m->raw += f->sh->page.n + f->sh->raw.n;
    m->packed += f->sh->page.n + zn;
    write_out(f, f->sh->page.p, f->sh->page.n);
    write_out(f, z, zn);
}

/* The bits a dictionary index of n entries takes (at least 1). */
static unsigned index_width(size_t n)
{
    unsigned w = 1;
    while (w < 32 && ((size_t)1 << w) < n)
        w++;
    return w;
}

/* A number column's dictionary holds at most this many values, and at
 * most a quarter of the group's: past that they are delta-packed. */
#define NUMBER_DICT_BITS 16
#define NUMBER_DICT_MAX (1u << NUMBER_DICT_BITS)

/* The distinct values of x's rows that have one into the scratch's dict,
 * each row's entry into its index (n of them); how many, or SIZE_MAX when
 * too many for a dictionary (or out of memory). */
static size_t number_dict(pq_file *f, const column *x, size_t *n)
{
    size_t table = 2 * NUMBER_DICT_MAX, most = f->rows / 4;
    most = most < NUMBER_DICT_MAX ? most : NUMBER_DICT_MAX;
    pq_shared *sh = f->sh;
    if ((!sh->dict && !(sh->dict = malloc(NUMBER_DICT_MAX * sizeof *sh->dict))) ||
        (!sh->dict_table && !(sh->dict_table = malloc(table * sizeof *sh->dict_table))))
        return SIZE_MAX; /* (the column is then delta-packed) */
    memset(f->sh->dict_table, 0, table * sizeof *f->sh->dict_table);
    size_t nent = 0;
    uint64_t prev = 0;
    *n = 0;
    for (uint32_t r = 0; r < f->rows; r++) {
        if (x->valid && !x->valid[r])
            continue;
        uint64_t v = x->v[r];
        if (*n && v == prev) { /* (as the value before: no search) */
            f->sh->index[*n] = f->sh->index[*n - 1];
            ++*n;
            continue;
        }
        prev = v;
        size_t i = fib_hash(v, NUMBER_DICT_BITS + 1);
        while (f->sh->dict_table[i] && f->sh->dict[f->sh->dict_table[i] - 1] != v)
            i = (i + 1) & (table - 1);
        if (!f->sh->dict_table[i]) {
            if (nent == most)
                return SIZE_MAX;
            f->sh->dict[nent++] = v;
            f->sh->dict_table[i] = (uint32_t)nent;
        }
        f->sh->index[(*n)++] = f->sh->dict_table[i] - 1;
    }
    return nent;
}

/* The least and the greatest of the n values v (none: 0 and 0) into m. */
static void min_max(chunk_meta *m, const uint64_t *v, size_t n)
{
    uint64_t lo = n ? v[0] : 0, hi = lo;
    for (size_t i = 1; i < n; i++) {
        lo = v[i] < lo ? v[i] : lo;
        hi = v[i] > hi ? v[i] : hi;
    }
    m->min = lo;
    m->max = hi;
}

/* The definition levels of optional column x's rows (1: a value, 0:
 * NULL), RLE/bit-packed after their length: one run when all are alike. */
static void put_levels(pq_file *f, const column *x)
{
    pq_bytes *raw = &f->sh->raw;
    size_t at = raw->n;
    pq_put_bytes(raw, "\0\0\0\0", 4); /* the length, below */
    if (!x->nulls || x->nulls == f->rows) {
        pq_put_varint(raw, (uint64_t)f->rows << 1);
        pq_put_byte(raw, !x->nulls);
    } else {
        uint64_t *levels = f->sh->index + f->rows; /* (past a dictionary's indices) */
        for (uint32_t r = 0; r < f->rows; r++)
            levels[r] = x->valid[r];
        pq_rle_hybrid(raw, levels, f->rows, 1);
    }
    if (!raw->bad) {
        uint32_t len = (uint32_t)(raw->n - at - 4);
        memcpy(raw->p + at, &len, 4);
    }
}

/* Column x's chunk of the row group: a dictionary page (a string
 * column's, or a number column's of few values), then its data page:
 * definition levels when optional, then the values of the rows that have
 * one: their dictionary indices, or the numbers delta-packed. */
static void write_chunk(pq_file *f, column *x, chunk_meta *m)
{
    uint32_t rows = f->rows;
    size_t size = x->def.type == PQ_U32 ? 4 : 8, n = 0; /* values */
    memset(m, 0, sizeof *m);
    f->sh->raw.n = 0;
    size_t nent; /* dictionary entries (0: none, a column of NULLs too) */
    if (x->def.type == PQ_STRING) {
        nent = x->nent;
        for (size_t e = 0; e < nent; e++) {
            pq_put_bytes(&f->sh->raw, &x->len[e], 4);
            pq_put_bytes(&f->sh->raw, x->text.p + x->at[e], x->len[e]);
        }
    } else {
        nent = x->form == FORM_DICT ? number_dict(f, x, &n) : SIZE_MAX;
        if (nent == SIZE_MAX) {
            x->form = x->form == FORM_DICT ? FORM_DELTA : x->form;
            nent = n = 0;
        }
        for (size_t e = 0; e < nent; e++)
            pq_put_bytes(&f->sh->raw, &f->sh->dict[e], size); /* (little-endian) */
        min_max(m, f->sh->dict, nent);
    }
    if (nent)
        write_page(f, PAGE_DICTIONARY, (uint32_t)nent, E_PLAIN, m);
    f->sh->raw.n = 0;
    if (x->valid)
        put_levels(f, x);
    /* the values there are (a number dictionary's indices are in the
     * scratch): the column's own, or the rows' that have one, in the
     * scratch */
    const uint64_t *v = x->v;
    if (x->def.type == PQ_STRING || !nent)
        n = rows - x->nulls;
    if (x->nulls && n && (x->def.type == PQ_STRING || !nent)) {
        for (uint32_t r = 0, k = 0; r < rows; r++)
            if (x->valid[r])
                f->sh->index[k++] = x->v[r];
        v = f->sh->index;
    }
    int encoding = nent ? E_RLE_DICTIONARY : E_PLAIN; /* (PLAIN: no values too) */
    if (nent) {
        unsigned width = index_width(nent);
        pq_put_byte(&f->sh->raw, (uint8_t)width);
        pq_rle_hybrid(&f->sh->raw, x->def.type == PQ_STRING ? v : f->sh->index, n, width);
    } else if (x->def.type != PQ_STRING) {
        min_max(m, v, n);
        size_t levels = f->sh->raw.n;
        if (x->form == FORM_DELTA && n) {
            pq_delta_packed(&f->sh->raw, v, n, size);
            encoding = E_DELTA_BINARY_PACKED;
            if (f->sh->raw.n - levels > n * size / 4) {
                x->form = FORM_PLAIN;
                f->sh->raw.n = levels;
                encoding = E_PLAIN;
            }
        }
        if (encoding == E_PLAIN) { /* little-endian */
            uint8_t *at = pq_room(&f->sh->raw, n * size);
            for (size_t i = 0; at && i < n; i++, at += size)
                memcpy(at, &v[i], size);
        }
    }
    m->encoding = encoding;
    m->values = n;
    write_page(f, PAGE_DATA, rows, encoding, m);
}

/* Writes the row group out (when it has rows) and starts the next. */
static void flush_group(pq_file *f)
{
    if (!f->rows || f->err[0])
        return;
    if (f->ngroups == f->groups_cap) {
        size_t cap = f->groups_cap ? 2 * f->groups_cap : 16;
        chunk_meta *m = realloc(f->meta, cap * f->ncols * sizeof *m);
        if (m)
            f->meta = m;
        uint64_t *r = m ? realloc(f->group_rows_of, cap * sizeof *r) : NULL;
        if (!r) {
            fail(f, "out of memory");
            return;
        }
        f->group_rows_of = r;
        f->groups_cap = cap;
    }
    if (open_out(f, "ab") != 0)
        return;
    for (size_t c = 0; c < f->ncols; c++) {
        column *x = &f->cols[c];
        write_chunk(f, x, &f->meta[f->ngroups * f->ncols + c]);
        /* the next group's dictionary starts empty */
        x->text.n = 0;
        x->nent = 0;
        x->last = 0;
        x->nulls = 0;
        if (x->table)
            memset(x->table, 0, x->table_size * sizeof *x->table);
        if (x->keys)
            memset(x->keys, 0, (1u << KEY_BITS) * sizeof *x->keys);
    }
    close_out(f);
    f->group_rows_of[f->ngroups++] = f->rows;
    f->rows = 0;
}

int pq_end_row(pq_file *f)
{
    f->total++;
    if (++f->rows == f->group_rows)
        flush_group(f);
    else if (f->rows == f->room && grow_rows(f) != 0)
        fail(f, "out of memory");
    return f->err[0] ? -1 : 0;
}

uint64_t pq_size(const pq_file *f)
{
    return f->size;
}

static const int physical[] = { [PQ_U32] = T_INT32, [PQ_U64] = T_INT64,
                                [PQ_STRING] = T_BYTE_ARRAY };
static const int converted[] = { [PQ_U32] = CT_UINT_32, [PQ_U64] = CT_UINT_64,
                                 [PQ_STRING] = CT_UTF8 };

/* The footer: FileMetaData. */
static void put_footer(pq_file *f, pq_bytes *b)
{
    pq_thrift t = { .b = b };
    pq_t_i32(&t, 1, 1); /* version */
    pq_t_list(&t, 2, C_STRUCT, f->ncols + 1);
    pq_t_begin(&t, 0); /* the root */
    pq_t_string(&t, 4, "schema");
    pq_t_i32(&t, 5, (int32_t)f->ncols);
    pq_t_end(&t);
    for (size_t c = 0; c < f->ncols; c++) {
        const pq_column *d = &f->cols[c].def;
        pq_t_begin(&t, 0);
        pq_t_i32(&t, 1, physical[d->type]);
        pq_t_i32(&t, 3, d->optional ? OPTIONAL : REQUIRED);
        pq_t_string(&t, 4, d->name);
        pq_t_i32(&t, 6, converted[d->type]);
        pq_t_end(&t);
    }
    pq_t_i64(&t, 3, (int64_t)f->total);
    pq_t_list(&t, 4, C_STRUCT, f->ngroups);
    for (size_t g = 0; g < f->ngroups; g++) {
        uint64_t raw = 0;
        pq_t_begin(&t, 0); /* RowGroup */
        pq_t_list(&t, 1, C_STRUCT, f->ncols);
        for (size_t c = 0; c < f->ncols; c++) {
            const chunk_meta *m = &f->meta[g * f->ncols + c];
            const pq_column *d = &f->cols[c].def;
            raw += m->raw;
            pq_t_begin(&t, 0); /* ColumnChunk */
            pq_t_i64(&t, 2, (int64_t)(m->dict_at ? m->dict_at : m->data_at));
            pq_t_begin(&t, 3); /* ColumnMetaData */
            pq_t_i32(&t, 1, physical[d->type]);
            /* the levels', the dictionary's, the values' */
            pq_t_list(&t, 2, C_I32, m->encoding == E_PLAIN ? 2 : 3);
            pq_t_list_i32(&t, E_RLE);
            pq_t_list_i32(&t, E_PLAIN);
            if (m->encoding != E_PLAIN)
                pq_t_list_i32(&t, m->encoding);
            pq_t_list(&t, 3, C_BINARY, 1);
            pq_t_list_string(&t, d->name);
            pq_t_i32(&t, 4, CODEC_ZSTD);
            pq_t_i64(&t, 5, (int64_t)f->group_rows_of[g]);
            pq_t_i64(&t, 6, (int64_t)m->raw);
            pq_t_i64(&t, 7, (int64_t)m->packed);
            pq_t_i64(&t, 9, (int64_t)m->data_at);
            if (m->dict_at)
                pq_t_i64(&t, 11, (int64_t)m->dict_at);
            pq_t_begin(&t, 12); /* Statistics: what lets a reader skip the group */
            pq_t_i64(&t, 3, (int64_t)(f->group_rows_of[g] - m->values)); /* nulls */
            if (d->type != PQ_STRING && m->values) {
                size_t size = d->type == PQ_U32 ? 4 : 8; /* (little-endian) */
                pq_t_bytes(&t, 5, &m->max, size);
                pq_t_bytes(&t, 6, &m->min, size);
            }
            pq_t_end(&t);
            pq_t_end(&t);
            pq_t_end(&t);
        }
        pq_t_i64(&t, 2, (int64_t)raw);
        pq_t_i64(&t, 3, (int64_t)f->group_rows_of[g]);
        pq_t_end(&t);
    }
    pq_t_string(&t, 6, "memtap");
    pq_put_byte(b, 0); /* FileMetaData's stop */
}

int pq_close(pq_file *f, char *err, size_t errcap)
{
    flush_group(f);
    pq_bytes footer = { 0 };
    if (!f->err[0]) {
        put_footer(f, &footer);
        if (footer.bad || footer.n > UINT32_MAX)
            fail(f, "out of memory");
    }
    uint32_t len = (uint32_t)footer.n;
    if (open_out(f, "ab") == 0) {
        write_out(f, footer.p, footer.n);
        write_out(f, &len, 4);
        write_out(f, "PAR1", 4);
    }
    free(footer.p);
    int rc = close_out(f);
    if (rc)
        snprintf(err, errcap, "%s", f->err);
    free_file(f);
    return rc;
}
