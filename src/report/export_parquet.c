/*
 * export_parquet.c - a trace as Parquet files written by DuckDB
 * (export_parquet.h).  DuckDB's library is loaded at run time (dlopen: it
 * comes from the npm registry, not from Debian, and only this export needs
 * it); the few C API calls used are declared here as DuckDB documents
 * them.  The accesses reach DuckDB through table functions,
 * memtap_accesses() and one a thread, that COPY ... (FORMAT parquet)
 * reads: the walk runs on a thread of its own and hands its rows over a
 * vector's worth at a time, their names as strings, to a COPY a thread
 * (each on a thread and a connection of its own) or with many threads to
 * one COPY ... PARTITION_BY, so nothing is stored between the trace and
 * the files (with --split, whose COPY is one a partition, they are kept
 * in a table first).  The heap blocks, modules,
 * threads and call stacks, which the same walk meets, go through
 * appenders into a DuckDB database file beside the output (so that memory
 * stays flat whatever the trace's size), copied out the same way after;
 * the database file is removed.
 *
 * One file: the DuckDB calls it loads, the table function and the
 * appenders that feed it and the COPY that writes it out share that one
 * table of functions and the database's schema.
 */
#define _GNU_SOURCE
#include "report/export_parquet.h"

#include "report/export_rows.h"
#include "sys/utf8.h"
#include "trace/info.h"
#include "trace/tool.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* DuckDB's C API (duckdb.h): handles are pointers; a result is a 48-byte
 * structure the caller owns. */
typedef void *duckdb_handle;
typedef struct duckdb_result {
    uint64_t column_count, row_count, rows_changed;
    void *columns;
    char *error_message;
    void *internal_data;
} duckdb_result;
enum { DUCKDB_SUCCESS = 0 };

typedef struct duckdb_api {
    void *lib;
    int (*open)(const char *path, duckdb_handle *db);
    void (*close)(duckdb_handle *db);
    int (*connect)(duckdb_handle db, duckdb_handle *con);
    void (*disconnect)(duckdb_handle *con);
    int (*query)(duckdb_handle con, const char *sql, duckdb_result *out);
    const char *(*result_error)(duckdb_result *r);
    void (*destroy_result)(duckdb_result *r);
    int (*appender_create)(duckdb_handle con, const char *schema,
                           const char *table, duckdb_handle *app);
    const char *(*appender_error)(duckdb_handle app);
    int (*appender_destroy)(duckdb_handle *app);
    int (*append_uint32)(duckdb_handle app, uint32_t v);
    int (*append_uint64)(duckdb_handle app, uint64_t v);
    int (*append_varchar)(duckdb_handle app, const char *v);
    int (*append_null)(duckdb_handle app);
    int (*end_row)(duckdb_handle app);
    /* whole columns at a time (the accesses) */
    duckdb_handle (*create_logical_type)(int type);
    void (*destroy_logical_type)(duckdb_handle *type);
    duckdb_handle (*data_chunk_get_vector)(duckdb_handle chunk, uint64_t col);
    void (*data_chunk_set_size)(duckdb_handle chunk, uint64_t n);
    void *(*vector_get_data)(duckdb_handle vector);
    void (*vector_ensure_validity_writable)(duckdb_handle vector);
    uint64_t *(*vector_get_validity)(duckdb_handle vector);
    uint64_t (*vector_size)(void);
    /* the table function the accesses come through */
    duckdb_handle (*create_table_function)(void);
    void (*destroy_table_function)(duckdb_handle *f);
    void (*table_function_set_name)(duckdb_handle f, const char *name);
    void (*table_function_set_extra_info)(duckdb_handle f, void *info,
                                          void (*destroy)(void *));
    void (*table_function_set_bind)(duckdb_handle f, void (*bind)(duckdb_handle));
    void (*table_function_set_init)(duckdb_handle f, void (*init)(duckdb_handle));
    void (*table_function_set_function)(duckdb_handle f,
                                        void (*fn)(duckdb_handle, duckdb_handle));
    int (*register_table_function)(duckdb_handle con, duckdb_handle f);
    void (*bind_add_result_column)(duckdb_handle info, const char *name,
                                   duckdb_handle type);
    void *(*function_get_extra_info)(duckdb_handle info);
    void (*function_set_error)(duckdb_handle info, const char *error);
    void (*vector_assign_string_element_len)(duckdb_handle vector, uint64_t row,
                                             const char *s, uint64_t len);
} duckdb_api;

static const struct { const char *name; size_t at; } api_names[] = {
    { "duckdb_open", offsetof(duckdb_api, open) },
    { "duckdb_close", offsetof(duckdb_api, close) },
    { "duckdb_connect", offsetof(duckdb_api, connect) },
    { "duckdb_disconnect", offsetof(duckdb_api, disconnect) },
    { "duckdb_query", offsetof(duckdb_api, query) },
    { "duckdb_result_error", offsetof(duckdb_api, result_error) },
    { "duckdb_destroy_result", offsetof(duckdb_api, destroy_result) },
    { "duckdb_appender_create", offsetof(duckdb_api, appender_create) },
    { "duckdb_appender_error", offsetof(duckdb_api, appender_error) },
    { "duckdb_appender_destroy", offsetof(duckdb_api, appender_destroy) },
    { "duckdb_append_uint32", offsetof(duckdb_api, append_uint32) },
    { "duckdb_append_uint64", offsetof(duckdb_api, append_uint64) },
    { "duckdb_append_varchar", offsetof(duckdb_api, append_varchar) },
    { "duckdb_append_null", offsetof(duckdb_api, append_null) },
    { "duckdb_appender_end_row", offsetof(duckdb_api, end_row) },
    { "duckdb_create_logical_type", offsetof(duckdb_api, create_logical_type) },
    { "duckdb_destroy_logical_type", offsetof(duckdb_api, destroy_logical_type) },
    { "duckdb_data_chunk_get_vector", offsetof(duckdb_api, data_chunk_get_vector) },
    { "duckdb_data_chunk_set_size", offsetof(duckdb_api, data_chunk_set_size) },
    { "duckdb_vector_get_data", offsetof(duckdb_api, vector_get_data) },
    { "duckdb_vector_ensure_validity_writable",
      offsetof(duckdb_api, vector_ensure_validity_writable) },
    { "duckdb_vector_get_validity", offsetof(duckdb_api, vector_get_validity) },
    { "duckdb_vector_size", offsetof(duckdb_api, vector_size) },
    { "duckdb_create_table_function", offsetof(duckdb_api, create_table_function) },
    { "duckdb_destroy_table_function", offsetof(duckdb_api, destroy_table_function) },
    { "duckdb_table_function_set_name", offsetof(duckdb_api, table_function_set_name) },
    { "duckdb_table_function_set_extra_info",
      offsetof(duckdb_api, table_function_set_extra_info) },
    { "duckdb_table_function_set_bind", offsetof(duckdb_api, table_function_set_bind) },
    { "duckdb_table_function_set_init", offsetof(duckdb_api, table_function_set_init) },
    { "duckdb_table_function_set_function",
      offsetof(duckdb_api, table_function_set_function) },
    { "duckdb_register_table_function", offsetof(duckdb_api, register_table_function) },
    { "duckdb_bind_add_result_column", offsetof(duckdb_api, bind_add_result_column) },
    { "duckdb_function_get_extra_info", offsetof(duckdb_api, function_get_extra_info) },
    { "duckdb_function_set_error", offsetof(duckdb_api, function_set_error) },
    /* (no check: the rows' strings are valid UTF-8 already) */
    { "duckdb_unsafe_vector_assign_string_element_len",
      offsetof(duckdb_api, vector_assign_string_element_len) },
};

/* DuckDB's type numbers (duckdb_type) of the accesses' columns. */
enum { DUCKDB_TYPE_UINTEGER = 8, DUCKDB_TYPE_UBIGINT = 9, DUCKDB_TYPE_VARCHAR = 17 };
enum { A_PID, A_TID, A_SEQ, A_KIND, A_PC, A_ADDRESS, A_SIZE, A_SOURCE,
       A_COUNT, A_FUNCTION, A_OBJECT, A_REGION, A_BLOCK, A_SITE, A_D1_MISSES,
       A_LL_MISSES, A_MISS_CAUSE, A_COLUMNS };
static const struct { const char *name; int type; } access_columns[A_COLUMNS] = {
    { "pid", DUCKDB_TYPE_UINTEGER },      { "tid", DUCKDB_TYPE_UINTEGER },
    { "seq", DUCKDB_TYPE_UBIGINT },       { "kind", DUCKDB_TYPE_VARCHAR },
    { "pc", DUCKDB_TYPE_UBIGINT },        { "address", DUCKDB_TYPE_UBIGINT },
    { "size", DUCKDB_TYPE_UBIGINT },      { "source", DUCKDB_TYPE_UBIGINT },
    { "count", DUCKDB_TYPE_UINTEGER },    { "function", DUCKDB_TYPE_VARCHAR },
    { "object", DUCKDB_TYPE_VARCHAR },    { "region", DUCKDB_TYPE_VARCHAR },
    { "block", DUCKDB_TYPE_UBIGINT },     { "site", DUCKDB_TYPE_VARCHAR },
    { "d1_misses", DUCKDB_TYPE_UINTEGER }, { "ll_misses", DUCKDB_TYPE_UINTEGER },
    { "miss_cause", DUCKDB_TYPE_VARCHAR },
};
/* the columns that may be NULL (a validity mask each) */
static const int nullable[] = { A_SOURCE, A_BLOCK, A_SITE, A_D1_MISSES, A_LL_MISSES,
                                A_MISS_CAUSE };
#define NULLABLE (sizeof nullable / sizeof *nullable)

/* A string of a batch: where its bytes are in the batch's text. */
typedef struct feed_text {
    uint32_t at, len;
} feed_text;

/* The bytes of one value of a column as a batch holds it: a string is
 * its place in the batch's text (feed_text). */
static size_t column_bytes(int c)
{
    switch (access_columns[c].type) {
    case DUCKDB_TYPE_UINTEGER: return 4;
    case DUCKDB_TYPE_UBIGINT: return 8;
    default: return sizeof(feed_text);
    }
}

/* The tables exported: the accesses (memtap_accesses(), or with --split
 * a table of its rows) and the tables the appenders fill. */
enum { T_ACCESSES, T_BLOCKS, T_MODULES, T_THREADS, T_STACKS, TABLES };
static const char *const table_names[TABLES] = { "accesses", "blocks",
                                                 "modules", "threads",
                                                 "stacks" };

static const char schema[] =
    /* one thread: the accesses' scan waits for the walk, and DuckDB's
     * other threads wait for the scan in a loop of mutex calls (a third
     * of an export's CPU with two) */
    "SET memory_limit='256MB'; SET preserve_insertion_order=false; SET threads=1;"
    "CREATE TABLE blocks(pid UINTEGER, number UBIGINT, kind VARCHAR,"
    " address UBIGINT, size UBIGINT, site UBIGINT, site_name VARCHAR,"
    " tid UINTEGER, alloc_seq UBIGINT, free_seq UBIGINT, stack UINTEGER);"
    "CREATE TABLE stacks(pid UINTEGER, stack UINTEGER, depth UINTEGER,"
    " pc UBIGINT, frame VARCHAR);"
    "CREATE TABLE modules(pid UINTEGER, id UINTEGER, path VARCHAR,"
    " base UBIGINT, build_id VARCHAR);"
    "CREATE TABLE threads(pid UINTEGER, tid UINTEGER, first_seq UBIGINT,"
    " last_seq UBIGINT, events UBIGINT);"
    "CREATE TABLE run_id(run UBIGINT);";

#define FEED_BATCHES 4

/* One batch of accesses' rows, column by column, as the table function
 * hands them to DuckDB. */
typedef struct feed_batch {
    uint64_t rows;
    void *col[A_COLUMNS];
    uint64_t *valid[NULLABLE]; /* nullable[i]'s validity mask */
    char *text;                 /* the strings' bytes, one after another */
    size_t text_len, text_cap;
} feed_batch;

/* Accesses on their way from the walk (a thread of its own) to DuckDB's
 * scan of a memtap_accesses() table function: a ring of batches, filled
 * in turn. */
typedef struct access_feed {
    uint32_t tid;               /* the thread whose rows it carries (0: all) */
    uint64_t capacity;          /* rows a batch (DuckDB's vector size) */
    feed_batch batch[FEED_BATCHES];
    pthread_mutex_t lock;
    pthread_cond_t changed;
    unsigned filled, taken;     /* batches filled and handed over so far */
    uint64_t rows;              /* in the batches filled */
    int done;                   /* the walk is over: rc says how */
    int rc;
    const char *why;            /* ... and why, when it failed */
    int stop;                   /* the scan ended early: the walk stops */
    int cut;                    /* ... and did (its error says no more) */
} access_feed;

/* The most threads of a process whose accesses are written each by a
 * COPY of its own, straight into its partition's file:
 * DuckDB's PARTITION_BY keeps every row until the end (a trace of one
 * thread 11.5 -> 8.6 s); each COPY keeps a row group of its own. */
#define FEEDS_MAX 8

typedef struct sink_state {
    duckdb_api *api;
    duckdb_handle app[TABLES];
    uint32_t pid;
    char *err;                  /* the walk's error */
    size_t errcap;
    access_feed *feeds;         /* one, or one a thread */
    size_t nfeeds, at;          /* at: the feed the last row went to */
    uint32_t *tids;             /* the threads (a split export's partitions) */
    size_t ntids;
    /* what the walk needs */
    memtap_trace *t;
    symbolizer *sym;
    const cache_geometry *cache;
    void (*progress)(void *);
    void *parg;
} sink_state;

static int load_api(duckdb_api *api, const char *lib, char *err,
                    size_t errcap)
{
    api->lib = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!api->lib) {
        snprintf(err, errcap, "cannot load DuckDB's library: %s", dlerror());
        return -1;
    }
    for (size_t i = 0; i < sizeof api_names / sizeof *api_names; i++) {
        void *f = dlsym(api->lib, api_names[i].name);
        if (!f) {
            snprintf(err, errcap, "%s: no %s (not DuckDB's C library?)", lib,
                     api_names[i].name);
            return -1;
        }
        memcpy((char *)api + api_names[i].at, &f, sizeof f);
    }
    return 0;
}

static int run_sql(duckdb_api *api, duckdb_handle con, const char *sql,
                   char *err, size_t errcap)
{
    duckdb_result r;
    memset(&r, 0, sizeof r);
    int rc = api->query(con, sql, &r);
    if (rc != DUCKDB_SUCCESS) {
        const char *why = api->result_error(&r);
        snprintf(err, errcap, "DuckDB: %s", why ? why : "query failed");
    }
    api->destroy_result(&r);
    return rc == DUCKDB_SUCCESS ? 0 : -1;
}

/* Ends a row; on failure says which table and why. */
static int end_row(sink_state *s, int table)
{
    if (s->api->end_row(s->app[table]) == DUCKDB_SUCCESS)
        return 0;
    const char *why = s->api->appender_error(s->app[table]);
    snprintf(s->err, s->errcap, "DuckDB: %s: %s", table_names[table],
             why ? why : "append failed");
    return -1;
}

/* ---- the accesses' feed ---- */

static void feed_free(access_feed *f)
{
    for (int k = 0; k < FEED_BATCHES; k++) {
        for (int c = 0; c < A_COLUMNS; c++)
            free(f->batch[k].col[c]);
        for (size_t i = 0; i < NULLABLE; i++)
            free(f->batch[k].valid[i]);
        free(f->batch[k].text);
    }
    pthread_mutex_destroy(&f->lock);
    pthread_cond_destroy(&f->changed);
}

/* Batches of DuckDB's vector size; 0, or -1 when out of memory (f then
 * freed). */
static int feed_init(access_feed *f, duckdb_api *d)
{
    pthread_mutex_init(&f->lock, NULL);
    pthread_cond_init(&f->changed, NULL);
    f->capacity = d->vector_size();
    int ok = 1;
    for (int k = 0; k < FEED_BATCHES; k++) {
        feed_batch *b = &f->batch[k];
        for (int c = 0; c < A_COLUMNS; c++)
            ok &= (b->col[c] = malloc(f->capacity * column_bytes(c))) != NULL;
        for (size_t i = 0; i < NULLABLE; i++)
            ok &= (b->valid[i] = calloc((f->capacity + 63) / 64, 8)) != NULL;
        b->text_cap = 1 << 16;
        ok &= (b->text = malloc(b->text_cap)) != NULL;
    }
    if (!ok)
        feed_free(f);
    return ok ? 0 : -1;
}

/* The batch the walk fills next, once the scan has given it back; NULL
 * when the scan stopped. */
static feed_batch *feed_room(access_feed *f)
{
    pthread_mutex_lock(&f->lock);
    while (f->filled - f->taken == FEED_BATCHES && !f->stop)
        pthread_cond_wait(&f->changed, &f->lock);
    int stop = f->stop;
    pthread_mutex_unlock(&f->lock);
    return stop ? NULL : &f->batch[f->filled % FEED_BATCHES];
}

/* The walk hands the batch it filled over (done: its last, rc its end,
 * why its error). */
static void feed_publish(access_feed *f, int done, int rc, const char *why)
{
    pthread_mutex_lock(&f->lock);
    uint64_t rows = f->batch[f->filled % FEED_BATCHES].rows;
    f->filled += rows != 0;
    f->rows += rows;
    f->done = done;
    f->rc = rc;
    f->why = why;
    pthread_cond_broadcast(&f->changed);
    pthread_mutex_unlock(&f->lock);
}

/* The scan stops taking batches (the COPY ended, or failed). */
static void feed_stop(access_feed *f)
{
    pthread_mutex_lock(&f->lock);
    f->stop = 1;
    pthread_cond_broadcast(&f->changed);
    pthread_mutex_unlock(&f->lock);
}

/* Keeps string v (NULL: none) as column c's value of row r of b, as
 * valid UTF-8 (what is not becomes U+FFFD: DuckDB takes the bytes as they
 * are); -1 when out of memory. */
static int put_text(feed_batch *b, int c, uint64_t r, const char *v)
{
    size_t n = v ? strlen(v) : 0;
    feed_text *t = b->col[c];
    if (r && t[r - 1].len == n && (!n || memcmp(b->text + t[r - 1].at, v, n) == 0)) {
        t[r] = t[r - 1]; /* the row before's string */
        return 0;
    }
    int ascii = utf8_ascii(v, n);
    size_t room = ascii ? n : 3 * n;
    if (b->text_len + room > b->text_cap) {
        size_t cap = b->text_cap;
        while (cap < b->text_len + room)
            cap *= 2;
        char *grown = cap <= UINT32_MAX ? realloc(b->text, cap) : NULL;
        if (!grown)
            return -1;
        b->text = grown;
        b->text_cap = cap;
    }
    char *at = b->text + b->text_len;
    if (!ascii)
        n = utf8_sanitize(v, n, at);
    else if (n) /* (v may be NULL then) */
        memcpy(at, v, n);
    t[r] = (feed_text){ (uint32_t)b->text_len, (uint32_t)n };
    b->text_len += n;
    return 0;
}

/* Row r of nullable column nullable[i] of b holds a value (valid) or
 * NULL. */
static void set_valid(feed_batch *b, size_t i, uint64_t r, int valid)
{
    uint64_t bit = 1ull << (r % 64);
    b->valid[i][r / 64] = valid ? b->valid[i][r / 64] | bit : b->valid[i][r / 64] & ~bit;
}

/* The feed of thread tid's accesses, or NULL. */
static access_feed *feed_of(sink_state *s, uint32_t tid)
{
    if (s->nfeeds == 1)
        return s->feeds;
    if (s->feeds[s->at].tid == tid)
        return &s->feeds[s->at];
    for (s->at = 0; s->at < s->nfeeds; s->at++)
        if (s->feeds[s->at].tid == tid)
            return &s->feeds[s->at];
    s->at = 0;
    return NULL;
}

static int put_access(void *arg, const export_access *a)
{
    sink_state *s = arg;
    access_feed *f = feed_of(s, a->tid);
    if (!f) {
        snprintf(s->err, s->errcap, "thread %u: none in the trace's chunks", a->tid);
        return 1;
    }
    feed_batch *b = &f->batch[f->filled % FEED_BATCHES];
    uint64_t r = b->rows;
    ((uint32_t *)b->col[A_PID])[r] = s->pid;
    ((uint32_t *)b->col[A_TID])[r] = a->tid;
    ((uint64_t *)b->col[A_SEQ])[r] = a->seq;
    ((uint64_t *)b->col[A_PC])[r] = a->pc;
    ((uint64_t *)b->col[A_ADDRESS])[r] = a->address;
    ((uint64_t *)b->col[A_SIZE])[r] = a->size;
    ((uint64_t *)b->col[A_SOURCE])[r] = a->source;
    ((uint32_t *)b->col[A_COUNT])[r] = a->count;
    ((uint64_t *)b->col[A_BLOCK])[r] = a->block ? a->block - 1 : 0;
    ((uint32_t *)b->col[A_D1_MISSES])[r] = a->d1_misses;
    ((uint32_t *)b->col[A_LL_MISSES])[r] = a->ll_misses;
    const int valid[NULLABLE] = { a->has_source, a->block != 0, a->block != 0,
                                  a->modeled, a->modeled, a->miss_cause != NULL };
    for (size_t i = 0; i < NULLABLE; i++)
        set_valid(b, i, r, valid[i]);
    if (put_text(b, A_KIND, r, a->kind) || put_text(b, A_FUNCTION, r, a->function) ||
        put_text(b, A_OBJECT, r, a->object) || put_text(b, A_REGION, r, a->region) ||
        put_text(b, A_SITE, r, a->block ? a->site : NULL) ||
        put_text(b, A_MISS_CAUSE, r, a->miss_cause)) {
        snprintf(s->err, s->errcap, "out of memory");
        return 1;
    }
    if (++b->rows < f->capacity)
        return 0;
    feed_publish(f, 0, 0, NULL);
    if (!(b = feed_room(f))) {
        f->cut = 1; /* DuckDB's error says why */
        snprintf(s->err, s->errcap, "DuckDB stopped reading the accesses");
        return 1;
    }
    b->rows = 0;
    b->text_len = 0;
    return 0;
}

/* ---- memtap_accesses(): the table function DuckDB reads them from ---- */

/* The library's calls for the table function's callbacks, which DuckDB
 * calls with no argument of memtap's but their info (the one export a
 * process makes at a time sets it). */
static duckdb_api *scan_api;

static void scan_bind(duckdb_handle info)
{
    for (int c = 0; c < A_COLUMNS; c++) {
        duckdb_handle type = scan_api->create_logical_type(access_columns[c].type);
        scan_api->bind_add_result_column(info, access_columns[c].name, type);
        scan_api->destroy_logical_type(&type);
    }
}

static void scan_init(duckdb_handle info)
{
    (void)info;
}

/* Batch b's rows into DuckDB's chunk out. */
static void scan_batch(duckdb_api *d, const feed_batch *b, duckdb_handle out)
{
    for (int c = 0; c < A_COLUMNS; c++) {
        duckdb_handle v = d->data_chunk_get_vector(out, (uint64_t)c);
        if (access_columns[c].type != DUCKDB_TYPE_VARCHAR) {
            memcpy(d->vector_get_data(v), b->col[c], b->rows * column_bytes(c));
            continue;
        }
        const feed_text *t = b->col[c];
        for (uint64_t r = 0; r < b->rows; r++)
            d->vector_assign_string_element_len(v, r, b->text + t[r].at, t[r].len);
    }
    for (size_t i = 0; i < NULLABLE; i++) {
        duckdb_handle v = d->data_chunk_get_vector(out, (uint64_t)nullable[i]);
        d->vector_ensure_validity_writable(v);
        memcpy(d->vector_get_validity(v), b->valid[i], (b->rows + 63) / 64 * 8);
    }
    d->data_chunk_set_size(out, b->rows);
}

/* The next batch of the walk's into out; none (out empty) at its end,
 * with an error when the walk failed. */
static void scan(duckdb_handle info, duckdb_handle out)
{
    duckdb_api *d = scan_api;
    access_feed *f = d->function_get_extra_info(info);
    pthread_mutex_lock(&f->lock);
    while (f->filled == f->taken && !f->done)
        pthread_cond_wait(&f->changed, &f->lock);
    int last = f->filled == f->taken, rc = f->rc;
    pthread_mutex_unlock(&f->lock);
    if (last) {
        if (rc)
            d->function_set_error(info, f->why);
        d->data_chunk_set_size(out, 0);
        return;
    }
    scan_batch(d, &f->batch[f->taken % FEED_BATCHES], out);
    pthread_mutex_lock(&f->lock);
    f->taken++;
    pthread_cond_broadcast(&f->changed);
    pthread_mutex_unlock(&f->lock);
}

/* The table function feed k is read through: memtap_accesses, then
 * memtap_accesses_1, ... */
static void scan_name(size_t k, char *name, size_t cap)
{
    snprintf(name, cap, k ? "memtap_accesses_%zu" : "memtap_accesses", k);
}

/* Registers feed k's table function on con, reading from f; 0, or -1. */
static int register_scan(duckdb_api *d, duckdb_handle con, access_feed *f, size_t k)
{
    char name[64];
    scan_name(k, name, sizeof name);
    scan_api = d;
    duckdb_handle fn = d->create_table_function();
    d->table_function_set_name(fn, name);
    d->table_function_set_extra_info(fn, f, NULL);
    d->table_function_set_bind(fn, scan_bind);
    d->table_function_set_init(fn, scan_init);
    d->table_function_set_function(fn, scan);
    int rc = d->register_table_function(con, fn);
    d->destroy_table_function(&fn);
    return rc == DUCKDB_SUCCESS ? 0 : -1;
}

/* Appends string v as valid UTF-8 (a byte that is not part of a
 * character as U+FFFD: DuckDB refuses the row otherwise); -1 when out of
 * memory. */
static int append_text(duckdb_api *d, duckdb_handle app, const char *v)
{
    size_t n = strlen(v);
    if (utf8_ascii(v, n))
        return d->append_varchar(app, v) == DUCKDB_SUCCESS ? 0 : -1;
    char *valid = malloc(3 * n + 1);
    if (!valid)
        return -1;
    valid[utf8_sanitize(v, n, valid)] = '\0';
    int rc = d->append_varchar(app, valid);
    free(valid);
    return rc == DUCKDB_SUCCESS ? 0 : -1;
}

static int put_block(void *arg, const export_block *b)
{
    sink_state *s = arg;
    duckdb_api *d = s->api;
    duckdb_handle app = s->app[T_BLOCKS];
    d->append_uint32(app, s->pid);
    d->append_uint64(app, b->number);
    append_text(d, app, b->kind);
    d->append_uint64(app, b->address);
    d->append_uint64(app, b->size);
    d->append_uint64(app, b->site);
    append_text(d, app, b->site_name);
    d->append_uint32(app, b->tid);
    d->append_uint64(app, b->alloc_seq);
    if (b->freed)
        d->append_uint64(app, b->free_seq);
    else
        d->append_null(app);
    if (b->stack)
        d->append_uint32(app, b->stack);
    else
        d->append_null(app);
    return end_row(s, T_BLOCKS);
}

static int put_frame(void *arg, const export_frame *f)
{
    sink_state *s = arg;
    duckdb_api *d = s->api;
    duckdb_handle app = s->app[T_STACKS];
    d->append_uint32(app, s->pid);
    d->append_uint32(app, f->stack);
    d->append_uint32(app, f->depth);
    d->append_uint64(app, f->pc);
    append_text(d, app, f->frame);
    return end_row(s, T_STACKS);
}

static int put_module(void *arg, const memtap_module *m, const char *build_id)
{
    sink_state *s = arg;
    duckdb_api *d = s->api;
    duckdb_handle app = s->app[T_MODULES];
    d->append_uint32(app, s->pid);
    d->append_uint32(app, m->id);
    append_text(d, app, m->path);
    d->append_uint64(app, m->base);
    append_text(d, app, build_id);
    return end_row(s, T_MODULES);
}

static int put_thread(void *arg, const export_thread *t)
{
    sink_state *s = arg;
    uint32_t *tids = realloc(s->tids, (s->ntids + 1) * sizeof *tids);
    if (!tids) {
        snprintf(s->err, s->errcap, "out of memory");
        return 1;
    }
    s->tids = tids;
    s->tids[s->ntids++] = t->tid;
    duckdb_api *d = s->api;
    duckdb_handle app = s->app[T_THREADS];
    d->append_uint32(app, s->pid);
    d->append_uint32(app, t->tid);
    d->append_uint64(app, t->first_seq);
    d->append_uint64(app, t->last_seq);
    d->append_uint64(app, t->events);
    return end_row(s, T_THREADS);
}

/* path as an SQL string literal (quotes doubled) into out. */
static int sql_literal(const char *path, char *out, size_t cap)
{
    size_t n = 0;
    out[n++] = '\'';
    for (const char *p = path; *p; p++) {
        if (n + 3 >= cap)
            return -1;
        if (*p == '\'')
            out[n++] = '\'';
        out[n++] = *p;
    }
    out[n++] = '\'';
    out[n] = '\0';
    return 0;
}

/* The tables as COPY reads them: a table's rows and the run. */
static const char *const table_queries[TABLES] = {
    [T_ACCESSES] = "(SELECT a.*, rid.run FROM memtap_accesses() a CROSS JOIN run_id rid)",
    [T_BLOCKS] = "(SELECT t.*, rid.run FROM blocks t CROSS JOIN run_id rid)",
    [T_MODULES] = "(SELECT t.*, rid.run FROM modules t CROSS JOIN run_id rid)",
    [T_THREADS] = "(SELECT t.*, rid.run FROM threads t CROSS JOIN run_id rid)",
    [T_STACKS] = "(SELECT t.*, rid.run FROM stacks t CROSS JOIN run_id rid)",
};

/* Table i as COPY reads it; with --split (stored) the accesses are the
 * table the walk filled first. */
static const char *exported(int i, int stored)
{
    return i == T_ACCESSES && stored ? "accesses" : table_queries[i];
}

/* One empty file of table i's columns (but the partitions') in the
 * partition directory part. */
static int empty_file(duckdb_api *api, duckdb_handle con, int i, int stored,
                      const char *part, char *err, size_t errcap)
{
    char file[4096 + 128], lit[2 * 4096 + 280], sql[2 * 4096 + 1024];
    snprintf(file, sizeof file, "%s/data_0.parquet", part);
    if (sql_literal(file, lit, sizeof lit)) {
        snprintf(err, errcap, "output path too long");
        return -1;
    }
    snprintf(sql, sizeof sql,
             "COPY (SELECT * EXCLUDE (%s) FROM %s LIMIT 0) TO %s (FORMAT parquet)",
             i == T_ACCESSES ? "pid, tid" : "pid", exported(i, stored), lit);
    return run_sql(api, con, sql, err, errcap);
}

/* The partition of table i that has no rows of this process (DuckDB's
 * COPY writes no file for it): one empty file with the table's columns,
 * so that read_parquet of DIR/TABLE and all below finds every table. */
static int empty_partition(duckdb_api *api, duckdb_handle con, const char *dir,
                           int i, uint32_t pid, char *err, size_t errcap)
{
    char part[4096 + 96];
    int n = snprintf(part, sizeof part, "%s/%s", dir, table_names[i]);
    mkdir(part, 0777);
    n += snprintf(part + n, sizeof part - (size_t)n, "/pid=%u", pid);
    if (access(part, F_OK) == 0)
        return 0; /* rows of this process: their files are there */
    mkdir(part, 0777);
    if (i == T_ACCESSES) { /* partitioned by thread too: the process's own */
        n += snprintf(part + n, sizeof part - (size_t)n, "/tid=%u", pid);
        mkdir(part, 0777);
    }
    return empty_file(api, con, i, 0, part, err, errcap);
}

/* The directory of process pid's partition of table i in dir (made),
 * and for the accesses of thread tid's, into part. */
static void partition_dir(const char *dir, int i, uint32_t pid, uint32_t tid, char *part,
                          size_t cap)
{
    int n = snprintf(part, cap, "%s/%s", dir, table_names[i]);
    mkdir(part, 0777);
    n += snprintf(part + n, cap - (size_t)n, "/pid=%u", pid);
    mkdir(part, 0777);
    if (i == T_ACCESSES) {
        snprintf(part + n, cap - (size_t)n, "/tid=%u", tid);
        mkdir(part, 0777);
    }
}

/* COPY of table i into dir, the accesses partitioned by process and
 * thread, the others by process; a table with no rows as one empty
 * file. */
static int copy_out(duckdb_api *api, duckdb_handle con, const char *dir, int i,
                    uint32_t pid, char *err, size_t errcap)
{
    char where[4096 + 64], lit[2 * 4096 + 80], sql[2 * 4096 + 1024];
    snprintf(where, sizeof where, "%s/%s", dir, table_names[i]);
    if (sql_literal(where, lit, sizeof lit)) {
        snprintf(err, errcap, "output path too long");
        return -1;
    }
    snprintf(sql, sizeof sql,
             "COPY %s TO %s (FORMAT parquet, COMPRESSION zstd, "
             "PARTITION_BY (%s), OVERWRITE_OR_IGNORE)",
             exported(i, 0), lit, i == T_ACCESSES ? "pid, tid" : "pid");
    if (run_sql(api, con, sql, err, errcap))
        return -1;
    return empty_partition(api, con, dir, i, pid, err, errcap);
}

/* The file of thread tid's accesses of process pid in dir, into file
 * (its directories made). */
static void thread_file(const char *dir, uint32_t pid, uint32_t tid, char *file, size_t cap)
{
    partition_dir(dir, T_ACCESSES, pid, tid, file, cap - 32);
    strcat(file, "/data_0.parquet");
}

/* COPY of the accesses of feed k (f, thread f->tid's) straight into
 * their partition's file. */
static int copy_thread(duckdb_api *api, duckdb_handle con, const char *dir, uint32_t pid,
                       const access_feed *f, size_t k, char *err, size_t errcap)
{
    char file[4096 + 128], lit[2 * 4096 + 280], name[64];
    char sql[2 * 4096 + 1024];
    thread_file(dir, pid, f->tid, file, sizeof file);
    if (sql_literal(file, lit, sizeof lit)) {
        snprintf(err, errcap, "output path too long");
        return -1;
    }
    scan_name(k, name, sizeof name);
    snprintf(sql, sizeof sql,
             "COPY (SELECT a.* EXCLUDE (pid, tid), rid.run FROM %s() a CROSS JOIN run_id rid)"
             " TO %s (FORMAT parquet, COMPRESSION zstd)", name, lit);
    return run_sql(api, con, sql, err, errcap);
}

/* The files of threads that had no accesses go, as DuckDB's PARTITION_BY
 * makes no partition for them (and the process's directory when none
 * had any: empty_partition makes its one empty file). */
static void drop_empty_threads(const sink_state *s, const char *dir)
{
    char file[4096 + 128];
    for (size_t k = 0; k < s->nfeeds; k++) {
        if (s->feeds[k].rows)
            continue;
        thread_file(dir, s->pid, s->feeds[k].tid, file, sizeof file);
        unlink(file);
        *strrchr(file, '/') = '\0';
        rmdir(file);              /* tid=T */
        *strrchr(file, '/') = '\0';
        rmdir(file);              /* pid=P, when it is empty */
    }
}

static int is_empty_dir(const char *dir);

/* A split export's partition of table i: the rows of process pid (and of
 * thread tid for the accesses) in files of about `split` bytes in the
 * partition's own directory, as PARTITION_BY names it (DuckDB does not
 * split partitioned files); one empty file when there are none. */
static int copy_split(duckdb_api *api, duckdb_handle con, const char *dir, int i,
                      uint32_t pid, uint32_t tid, uint64_t split, char *err,
                      size_t errcap)
{
    char part[4096 + 96], lit[2 * 4096 + 256], sql[2 * 4096 + 1536];
    partition_dir(dir, i, pid, tid, part, sizeof part);
    if (sql_literal(part, lit, sizeof lit)) {
        snprintf(err, errcap, "output path too long");
        return -1;
    }
    char where[96];
    snprintf(where, sizeof where, i == T_ACCESSES ? "pid = %u AND tid = %u" : "pid = %u",
             pid, tid);
    snprintf(sql, sizeof sql,
             "COPY (SELECT * EXCLUDE (%s) FROM %s WHERE %s) TO %s (FORMAT parquet, "
             "COMPRESSION zstd, FILE_SIZE_BYTES %" PRIu64 ", OVERWRITE_OR_IGNORE)",
             i == T_ACCESSES ? "pid, tid" : "pid", exported(i, 1), where, lit, split);
    if (run_sql(api, con, sql, err, errcap))
        return -1;
    return is_empty_dir(part) ? empty_file(api, con, i, 1, part, err, errcap) : 0;
}

#define RUN_MARK ".memtap-run" /* in an export's directory: whose it is */

/* Whether dir has nothing in it. */
static int is_empty_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int empty = d != NULL;
    while (empty && (e = readdir(d)))
        empty = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
    if (d)
        closedir(d);
    return empty;
}

/* dir is new or empty, or an earlier export of the same run (its RUN_MARK
 * says which; the processes of one run share a directory) that has no
 * files of this pid.  A trace of no `memtap run` (no run number) goes
 * into a directory of its own. */
static int check_output(const char *dir, uint32_t pid, const char *run,
                        char *err, size_t errcap)
{
    char mine[4096 + 64], mark[4096 + 16], theirs[64] = "";
    snprintf(mine, sizeof mine, "%s/accesses/pid=%u", dir, pid);
    snprintf(mark, sizeof mark, "%s/" RUN_MARK, dir);
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        snprintf(err, errcap, "%s", strerror(errno));
        return -1;
    }
    FILE *f = fopen(mark, "r");
    if (f) {
        if (!fgets(theirs, sizeof theirs, f))
            theirs[0] = '\0';
        fclose(f);
        theirs[strcspn(theirs, "\n")] = '\0';
    } else if (!is_empty_dir(dir)) {
        snprintf(err, errcap, "holds other files (no export of memtap's): "
                              "export into a new directory");
        return -1;
    }
    if (f && (!run[0] || strcmp(theirs, run) != 0)) {
        snprintf(err, errcap, "holds the export of another run (run %s): "
                              "export each run into a directory of its own",
                 theirs[0] ? theirs : "unknown");
        return -1;
    }
    if (access(mine, F_OK) == 0) {
        snprintf(err, errcap, "holds process %u's files already (remove "
                              "them first)", pid);
        return -1;
    }
    if (!f && (f = fopen(mark, "w"))) {
        fprintf(f, "%s\n", run);
        fclose(f);
    }
    return 0;
}

static void remove_database(const char *db)
{
    char wal[4096 + 8];
    unlink(db);
    snprintf(wal, sizeof wal, "%s.wal", db);
    unlink(wal);
}

/* The walk, on a thread of its own: its accesses to the feeds, the rest
 * to the appenders. */
static void *walk_main(void *arg)
{
    sink_state *s = arg;
    export_sink sink = { put_module, put_access, put_block, put_thread, put_frame, s };
    int rc = export_rows(s->t, s->sym, s->cache, &sink, s->progress, s->parg, s->err,
                         s->errcap);
    for (size_t k = 0; k < s->nfeeds; k++)
        feed_publish(&s->feeds[k], 1, rc, s->err);
    return NULL;
}

/* What reads one feed: a COPY (or with --split the table of the rows) on
 * a connection of its own, on a thread of its own. */
typedef struct feed_reader {
    sink_state *s;
    size_t k;                   /* the feed */
    duckdb_handle db;
    const char *dir;
    uint64_t split;
    pthread_t thread;
    int started, rc;
    char err[512];
} feed_reader;

static void *reader_main(void *arg)
{
    feed_reader *r = arg;
    sink_state *s = r->s;
    access_feed *f = &s->feeds[r->k];
    duckdb_handle con = NULL;
    char sql[256];
    snprintf(sql, sizeof sql, "CREATE TABLE accesses AS SELECT * FROM %s",
             exported(T_ACCESSES, 0));
    r->rc = -1;
    if (s->api->connect(r->db, &con) != DUCKDB_SUCCESS)
        snprintf(r->err, sizeof r->err, "DuckDB: no connection");
    else if (r->split)
        r->rc = run_sql(s->api, con, sql, r->err, sizeof r->err);
    else if (f->tid)
        r->rc = copy_thread(s->api, con, r->dir, s->pid, f, r->k, r->err, sizeof r->err);
    else
        r->rc = copy_out(s->api, con, r->dir, T_ACCESSES, s->pid, r->err, sizeof r->err);
    feed_stop(f); /* the walk stops when the COPY did */
    if (con)
        s->api->disconnect(&con);
    return NULL;
}

static void feeds_close(sink_state *s)
{
    for (size_t k = 0; k < s->nfeeds; k++)
        feed_free(&s->feeds[k]);
    free(s->feeds);
    s->feeds = NULL;
}

/* The feeds of s: one a thread of the trace when there are at most
 * FEEDS_MAX and no --split, each thread's accesses written straight into
 * its file; else one for all.  0, or -1 when out of memory. */
static int feeds_open(sink_state *s, uint64_t split)
{
    uint32_t tids[FEEDS_MAX];
    size_t n = trace_threads(s->t, tids, FEEDS_MAX);
    int each = !split && n >= 1 && n <= FEEDS_MAX;
    size_t want = each ? n : 1;
    if (!(s->feeds = calloc(want, sizeof *s->feeds)))
        return -1;
    for (s->nfeeds = 0; s->nfeeds < want; s->nfeeds++) {
        access_feed *f = &s->feeds[s->nfeeds];
        f->tid = each ? tids[s->nfeeds] : 0;
        if (feed_init(f, s->api) != 0) { /* (f freed itself) */
            feeds_close(s);
            return -1;
        }
    }
    return 0;
}

/* The accesses, walked on a thread while DuckDB reads them on others:
 * into dir's accesses files, or with split into the table accesses; then
 * the appenders' tables are complete.  0, or -1 with the reason in err. */
static int export_accesses(sink_state *s, duckdb_handle db, duckdb_handle con,
                           const char *dir, uint64_t split, char *err, size_t errcap)
{
    duckdb_api *api = s->api;
    if (feeds_open(s, split) != 0) {
        snprintf(err, errcap, "out of memory");
        return -1;
    }
    feed_reader readers[FEEDS_MAX];
    memset(readers, 0, sizeof readers);
    pthread_t walker;
    int rc = 0, walking = 0;
    for (size_t k = 0; rc == 0 && k < s->nfeeds; k++)
        if (register_scan(api, con, &s->feeds[k], k) != 0) {
            snprintf(err, errcap, "DuckDB: cannot register a table function");
            rc = -1;
        }
    if (rc == 0 && (rc = pthread_create(&walker, NULL, walk_main, s)) != 0)
        snprintf(err, errcap, "cannot start a thread: %s", strerror(rc));
    walking = rc == 0;
    for (size_t k = 0; rc == 0 && k < s->nfeeds; k++) {
        feed_reader *r = &readers[k];
        *r = (feed_reader){ .s = s, .k = k, .db = db, .dir = dir, .split = split };
        if ((rc = pthread_create(&r->thread, NULL, reader_main, r)) != 0)
            snprintf(err, errcap, "cannot start a thread: %s", strerror(rc));
        r->started = rc == 0;
    }
    if (rc != 0) /* the walk stops at once */
        for (size_t k = 0; k < s->nfeeds; k++)
            feed_stop(&s->feeds[k]);
    for (size_t k = 0; k < s->nfeeds; k++)
        if (readers[k].started)
            pthread_join(readers[k].thread, NULL);
    if (walking)
        pthread_join(walker, NULL);
    /* a COPY that failed first stopped the walk at its feed (cut); the
     * others' then failed because the walk did: the first says why */
    int cut = 0, walk_rc = 0;
    const feed_reader *failed = NULL;
    for (size_t k = 0; k < s->nfeeds; k++) {
        const feed_reader *r = &readers[k];
        if (r->started && r->rc && (!failed || (s->feeds[k].cut && !s->feeds[failed->k].cut)))
            failed = r;
        cut |= s->feeds[k].cut;
        walk_rc |= s->feeds[k].rc;
    }
    if (failed && rc == 0) {
        snprintf(err, errcap, "%s", failed->err);
        rc = -1;
    }
    if (walk_rc && !(rc && cut)) /* the walk's own error (DuckDB's says only
                                    that the scan failed) */
        snprintf(err, errcap, "%s", s->err);
    if (rc == 0 && !walk_rc && !split && s->feeds[0].tid) {
        drop_empty_threads(s, dir);
        rc = empty_partition(api, con, dir, T_ACCESSES, s->pid, err, errcap);
    }
    feeds_close(s);
    return rc || walk_rc ? -1 : 0;
}

int export_parquet(memtap_trace *t, symbolizer *sym, const cache_geometry *cache,
                   const char *lib, const char *dir, uint64_t split,
                   void (*progress)(void *),
                   void *arg, char *err, size_t errcap)
{
    uint32_t pid = memtap_trace_header(t)->pid;
    char run[64];
    trace_info_copy(t, "run", run, sizeof run);
    duckdb_api api;
    memset(&api, 0, sizeof api);
    if (check_output(dir, pid, run, err, errcap) ||
        load_api(&api, lib, err, errcap)) {
        if (api.lib)
            dlclose(api.lib);
        return -1;
    }
    char db_path[4096];
    snprintf(db_path, sizeof db_path, "%s/.memtap-export-%u.duckdb", dir, pid);
    remove_database(db_path);
    duckdb_handle db = NULL, con = NULL, appending = NULL;
    char walk_err[512] = "";
    sink_state s = { .api = &api, .pid = pid, .err = walk_err, .errcap = sizeof walk_err,
                     .t = t, .sym = sym, .cache = cache, .progress = progress,
                     .parg = arg };
    /* every row's run: the number memtap run gave it (NULL for none) */
    char run_row[128];
    snprintf(run_row, sizeof run_row, "INSERT INTO run_id VALUES (%s);",
             run[0] && strspn(run, "0123456789") == strlen(run) ? run : "NULL");
    int rc = -1;
    if (api.open(db_path, &db) != DUCKDB_SUCCESS ||
             api.connect(db, &con) != DUCKDB_SUCCESS ||
             api.connect(db, &appending) != DUCKDB_SUCCESS)
        snprintf(err, errcap, "DuckDB cannot create %s", db_path);
    else if (run_sql(&api, con, schema, err, errcap) == 0 &&
             run_sql(&api, con, run_row, err, errcap) == 0)
        rc = 0;
    /* the appenders have a connection of their own: the walk appends
     * while the accesses' COPYs run on theirs */
    for (int i = T_ACCESSES + 1; rc == 0 && i < TABLES; i++)
        if (api.appender_create(appending, NULL, table_names[i], &s.app[i]) !=
            DUCKDB_SUCCESS) {
            snprintf(err, errcap, "DuckDB: no appender for %s", table_names[i]);
            rc = -1;
        }
    if (rc == 0)
        rc = export_accesses(&s, db, con, dir, split, err, errcap);
    for (int i = 0; i < TABLES; i++)
        if (s.app[i] && api.appender_destroy(&s.app[i]) != DUCKDB_SUCCESS &&
            rc == 0) { /* flushes the last rows */
            snprintf(err, errcap, "DuckDB: %s: cannot write the last rows",
                     table_names[i]);
            rc = -1;
        }
    for (int i = 0; rc == 0 && split && i < TABLES; i++)
        for (size_t k = 0; rc == 0 && k < (i == T_ACCESSES ? s.ntids : 1); k++)
            rc = copy_split(&api, con, dir, i, pid, i == T_ACCESSES ? s.tids[k] : 0,
                            split, err, errcap);
    for (int i = T_ACCESSES + 1; rc == 0 && !split && i < TABLES; i++)
        rc = copy_out(&api, con, dir, i, pid, err, errcap);
    free(s.tids);
    if (appending)
        api.disconnect(&appending);
    if (con)
        api.disconnect(&con);
    if (db)
        api.close(&db);
    remove_database(db_path);
    /* DuckDB's threads and thread-local state outlive close: the library
     * stays loaded until the command exits */
    return rc;
}
