/*
 * export_parquet.c - a trace as Parquet files written by DuckDB
 * (export_parquet.h).  DuckDB's library is loaded at run time (dlopen: it
 * comes from the npm registry, not from Debian, and only this export needs
 * it); the few C API calls used are declared here as DuckDB documents
 * them.  Rows go through appenders (the accesses a chunk of columns at a
 * time) into a DuckDB database file beside the output (so that memory
 * stays flat whatever the trace's size), then
 * COPY ... (FORMAT parquet, PARTITION_BY ...) writes the files (or, with
 * --split, one COPY a partition) and the database file is removed.
 *
 * One file: the DuckDB calls it loads, the appenders that fill the
 * database and the COPY that writes it out share that one table of
 * functions and the database's schema.
 */
#define _GNU_SOURCE
#include "report/export_parquet.h"

#include "report/export_rows.h"
#include "report/name_cache.h"
#include "trace/info.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
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
    duckdb_handle (*create_data_chunk)(duckdb_handle *types, uint64_t n);
    void (*destroy_data_chunk)(duckdb_handle *chunk);
    void (*data_chunk_reset)(duckdb_handle chunk);
    duckdb_handle (*data_chunk_get_vector)(duckdb_handle chunk, uint64_t col);
    void (*data_chunk_set_size)(duckdb_handle chunk, uint64_t n);
    void *(*vector_get_data)(duckdb_handle vector);
    void (*vector_ensure_validity_writable)(duckdb_handle vector);
    uint64_t *(*vector_get_validity)(duckdb_handle vector);
    void (*vector_assign_string_element)(duckdb_handle vector, uint64_t row,
                                         const char *s);
    int (*append_data_chunk)(duckdb_handle app, duckdb_handle chunk);
    uint64_t (*vector_size)(void);
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
    { "duckdb_create_data_chunk", offsetof(duckdb_api, create_data_chunk) },
    { "duckdb_destroy_data_chunk", offsetof(duckdb_api, destroy_data_chunk) },
    { "duckdb_data_chunk_reset", offsetof(duckdb_api, data_chunk_reset) },
    { "duckdb_data_chunk_get_vector", offsetof(duckdb_api, data_chunk_get_vector) },
    { "duckdb_data_chunk_set_size", offsetof(duckdb_api, data_chunk_set_size) },
    { "duckdb_vector_get_data", offsetof(duckdb_api, vector_get_data) },
    { "duckdb_vector_ensure_validity_writable",
      offsetof(duckdb_api, vector_ensure_validity_writable) },
    { "duckdb_vector_get_validity", offsetof(duckdb_api, vector_get_validity) },
    { "duckdb_vector_assign_string_element",
      offsetof(duckdb_api, vector_assign_string_element) },
    { "duckdb_append_data_chunk", offsetof(duckdb_api, append_data_chunk) },
    { "duckdb_vector_size", offsetof(duckdb_api, vector_size) },
};

/* DuckDB's type numbers (duckdb_type) of the accesses' columns. */
enum { DUCKDB_TYPE_UTINYINT = 6, DUCKDB_TYPE_UINTEGER = 8,
       DUCKDB_TYPE_UBIGINT = 9 };
enum { A_PID, A_TID, A_SEQ, A_KIND, A_PC, A_ADDRESS, A_SIZE, A_SOURCE,
       A_COUNT, A_FUNCTION, A_OBJECT, A_REGION, A_BLOCK, A_SITE, A_D1_MISSES,
       A_LL_MISSES, A_MISS_CAUSE, A_COLUMNS };
static const int access_types[A_COLUMNS] = {
    DUCKDB_TYPE_UINTEGER, DUCKDB_TYPE_UINTEGER, DUCKDB_TYPE_UBIGINT,
    DUCKDB_TYPE_UTINYINT, DUCKDB_TYPE_UBIGINT, DUCKDB_TYPE_UBIGINT,
    DUCKDB_TYPE_UBIGINT, DUCKDB_TYPE_UBIGINT, DUCKDB_TYPE_UINTEGER,
    DUCKDB_TYPE_UINTEGER, DUCKDB_TYPE_UINTEGER, DUCKDB_TYPE_UINTEGER,
    DUCKDB_TYPE_UBIGINT, DUCKDB_TYPE_UINTEGER, DUCKDB_TYPE_UINTEGER,
    DUCKDB_TYPE_UINTEGER, DUCKDB_TYPE_UINTEGER,
};
/* the columns that may be NULL (a validity mask each) */
static const int nullable[] = { A_SOURCE, A_BLOCK, A_SITE, A_D1_MISSES, A_LL_MISSES,
                                A_MISS_CAUSE };

/* The tables exported, then the names the accesses' function, object and
 * region columns hold the ids of until the export joins them back (an
 * integer column costs DuckDB's table storage far less than a string;
 * the kind is its letter's code until then, for the same reason). */
enum { T_ACCESSES, T_BLOCKS, T_MODULES, T_THREADS, T_STACKS, EXPORTED,
       T_NAMES = EXPORTED, TABLES };
static const char *const table_names[TABLES] = { "accesses", "blocks",
                                                 "modules", "threads",
                                                 "stacks", "names" };

static const char schema[] =
    "SET memory_limit='256MB'; SET preserve_insertion_order=false;"
    "CREATE TABLE accesses(pid UINTEGER, tid UINTEGER, seq UBIGINT,"
    " kind UTINYINT, pc UBIGINT, address UBIGINT, size UBIGINT,"
    " source UBIGINT, count UINTEGER, function UINTEGER, object UINTEGER,"
    " region UINTEGER, block UBIGINT, site UINTEGER, d1_misses UINTEGER,"
    " ll_misses UINTEGER, miss_cause UINTEGER);"
    "CREATE TABLE names(id UINTEGER, name VARCHAR);"
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

typedef struct sink_state {
    duckdb_api *api;
    duckdb_handle app[TABLES];
    uint32_t pid;
    char *err;
    size_t errcap;
    /* the accesses go a chunk of rows at a time */
    duckdb_handle chunk, vec[A_COLUMNS];
    void *col[A_COLUMNS];
    uint64_t rows, capacity;
    name_cache *names;          /* recent names -> ids in the names table */
    uint32_t next_id;
    uint64_t site_key;          /* the last access's site, and its id */
    uint32_t site_id;
    uint32_t *tids;             /* the threads (a split export's partitions) */
    size_t ntids;
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

/* Makes the chunk the accesses fill; 0, or -1. */
static int chunk_open(sink_state *s)
{
    duckdb_api *d = s->api;
    duckdb_handle types[A_COLUMNS];
    for (int i = 0; i < A_COLUMNS; i++)
        types[i] = d->create_logical_type(access_types[i]);
    s->chunk = d->create_data_chunk(types, A_COLUMNS);
    for (int i = 0; i < A_COLUMNS; i++)
        d->destroy_logical_type(&types[i]);
    if (!s->chunk) {
        snprintf(s->err, s->errcap, "DuckDB: no data chunk");
        return -1;
    }
    s->capacity = d->vector_size();
    for (int i = 0; i < A_COLUMNS; i++) {
        s->vec[i] = d->data_chunk_get_vector(s->chunk, i);
        s->col[i] = d->vector_get_data(s->vec[i]);
    }
    for (size_t i = 0; i < sizeof nullable / sizeof *nullable; i++)
        d->vector_ensure_validity_writable(s->vec[nullable[i]]);
    return 0;
}

/* Appends the rows the chunk holds and empties it. */
static int chunk_flush(sink_state *s)
{
    duckdb_api *d = s->api;
    if (!s->rows)
        return 0;
    d->data_chunk_set_size(s->chunk, s->rows);
    int rc = d->append_data_chunk(s->app[T_ACCESSES], s->chunk);
    s->rows = 0;
    d->data_chunk_reset(s->chunk);
    for (int i = 0; i < A_COLUMNS; i++) /* a reset may move the data */
        s->col[i] = d->vector_get_data(s->vec[i]);
    for (size_t i = 0; i < sizeof nullable / sizeof *nullable; i++)
        d->vector_ensure_validity_writable(s->vec[nullable[i]]);
    if (rc == DUCKDB_SUCCESS)
        return 0;
    const char *why = d->appender_error(s->app[T_ACCESSES]);
    snprintf(s->err, s->errcap, "DuckDB: accesses: %s",
             why ? why : "append failed");
    return -1;
}

/* The id of a name in the names table; -1 on error.  A name the cache
 * has forgotten gets a new id, its second row in the table: the join
 * gives each id its string all the same, and memory stays bounded. */
static int64_t name_id(sink_state *s, const char *name)
{
    int64_t id = name_cache_get(s->names, name);
    if (id >= 0)
        return id;
    id = s->next_id++;
    s->api->append_uint32(s->app[T_NAMES], (uint32_t)id);
    s->api->append_varchar(s->app[T_NAMES], name);
    if (end_row(s, T_NAMES))
        return -1;
    name_cache_put(s->names, name, id);
    return id;
}

/* Row r of vector v holds a value (valid) or NULL. */
static void set_valid(duckdb_api *d, duckdb_handle v, uint64_t r, int valid)
{
    uint64_t *mask = d->vector_get_validity(v);
    if (valid)
        mask[r / 64] |= 1ull << (r % 64);
    else
        mask[r / 64] &= ~(1ull << (r % 64));
}

static int put_access(void *arg, const export_access *a)
{
    sink_state *s = arg;
    duckdb_api *d = s->api;
    uint64_t r = s->rows;
    ((uint32_t *)s->col[A_PID])[r] = s->pid;
    ((uint32_t *)s->col[A_TID])[r] = a->tid;
    ((uint64_t *)s->col[A_SEQ])[r] = a->seq;
    ((uint64_t *)s->col[A_PC])[r] = a->pc;
    ((uint64_t *)s->col[A_ADDRESS])[r] = a->address;
    ((uint64_t *)s->col[A_SIZE])[r] = a->size;
    ((uint64_t *)s->col[A_SOURCE])[r] = a->source;
    set_valid(d, s->vec[A_SOURCE], r, a->has_source);
    ((uint32_t *)s->col[A_COUNT])[r] = a->count;
    ((uint8_t *)s->col[A_KIND])[r] = (uint8_t)a->kind[0];
    int64_t f = name_id(s, a->function), o = name_id(s, a->object),
            g = name_id(s, a->region);
    if (f < 0 || o < 0 || g < 0)
        return -1;
    ((uint32_t *)s->col[A_FUNCTION])[r] = (uint32_t)f;
    ((uint32_t *)s->col[A_OBJECT])[r] = (uint32_t)o;
    ((uint32_t *)s->col[A_REGION])[r] = (uint32_t)g;
    int64_t site = a->site_key == s->site_key ? s->site_id
                   : a->site                   ? name_id(s, a->site) : 0;
    if (site < 0)
        return -1;
    s->site_key = a->site_key;
    s->site_id = (uint32_t)site;
    ((uint64_t *)s->col[A_BLOCK])[r] = a->block ? a->block - 1 : 0;
    ((uint32_t *)s->col[A_SITE])[r] = (uint32_t)site;
    set_valid(d, s->vec[A_BLOCK], r, a->block != 0);
    set_valid(d, s->vec[A_SITE], r, a->block != 0);
    int64_t cause = a->miss_cause ? name_id(s, a->miss_cause) : 0;
    if (cause < 0)
        return -1;
    ((uint32_t *)s->col[A_D1_MISSES])[r] = a->d1_misses;
    ((uint32_t *)s->col[A_LL_MISSES])[r] = a->ll_misses;
    ((uint32_t *)s->col[A_MISS_CAUSE])[r] = (uint32_t)cause;
    set_valid(d, s->vec[A_D1_MISSES], r, a->modeled);
    set_valid(d, s->vec[A_LL_MISSES], r, a->modeled);
    set_valid(d, s->vec[A_MISS_CAUSE], r, a->miss_cause != NULL);
    return ++s->rows == s->capacity ? chunk_flush(s) : 0;
}

static int put_block(void *arg, const export_block *b)
{
    sink_state *s = arg;
    duckdb_api *d = s->api;
    duckdb_handle app = s->app[T_BLOCKS];
    d->append_uint32(app, s->pid);
    d->append_uint64(app, b->number);
    d->append_varchar(app, b->kind);
    d->append_uint64(app, b->address);
    d->append_uint64(app, b->size);
    d->append_uint64(app, b->site);
    d->append_varchar(app, b->site_name);
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
    d->append_varchar(app, f->frame);
    return end_row(s, T_STACKS);
}

static int put_module(void *arg, const memtap_module *m, const char *build_id)
{
    sink_state *s = arg;
    duckdb_api *d = s->api;
    duckdb_handle app = s->app[T_MODULES];
    d->append_uint32(app, s->pid);
    d->append_uint32(app, m->id);
    d->append_varchar(app, m->path);
    d->append_uint64(app, m->base);
    d->append_varchar(app, build_id);
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

static const char accesses_query[] =
    "(SELECT a.pid, a.tid, a.seq, chr(a.kind) AS kind, a.pc, a.address,"
    " a.size,"
    " a.source, a.count, f.name AS function, o.name AS object,"
    " r.name AS region, a.block, s.name AS site, a.d1_misses, a.ll_misses,"
    " c.name AS miss_cause, rid.run FROM accesses a CROSS JOIN run_id rid"
    " JOIN names f ON f.id = a.function"
    " JOIN names o ON o.id = a.object"
    " JOIN names r ON r.id = a.region"
    " LEFT JOIN names s ON s.id = a.site"
    " LEFT JOIN names c ON c.id = a.miss_cause)";

/* The other tables as COPY reads them: a table's rows and the run. */
static const char *const other_queries[EXPORTED] = {
    [T_BLOCKS] = "(SELECT t.*, rid.run FROM blocks t CROSS JOIN run_id rid)",
    [T_MODULES] = "(SELECT t.*, rid.run FROM modules t CROSS JOIN run_id rid)",
    [T_THREADS] = "(SELECT t.*, rid.run FROM threads t CROSS JOIN run_id rid)",
    [T_STACKS] = "(SELECT t.*, rid.run FROM stacks t CROSS JOIN run_id rid)",
};

/* A table as COPY reads it. */
static const char *exported(int i)
{
    return i == T_ACCESSES ? accesses_query : other_queries[i];
}

/* One empty file of table i's columns (but the partitions') in the
 * partition directory part. */
static int empty_file(duckdb_api *api, duckdb_handle con, int i, const char *part,
                      char *err, size_t errcap)
{
    char file[4096 + 128], lit[2 * 4096 + 280], sql[2 * 4096 + 1024];
    snprintf(file, sizeof file, "%s/data_0.parquet", part);
    if (sql_literal(file, lit, sizeof lit)) {
        snprintf(err, errcap, "output path too long");
        return -1;
    }
    snprintf(sql, sizeof sql,
             "COPY (SELECT * EXCLUDE (%s) FROM %s LIMIT 0) TO %s (FORMAT parquet)",
             i == T_ACCESSES ? "pid, tid" : "pid", exported(i), lit);
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
    return empty_file(api, con, i, part, err, errcap);
}

/* COPY of every table into dir: accesses partitioned by process and
 * thread, the others by process; a table with no rows as one empty
 * file. */
static int copy_out(duckdb_api *api, duckdb_handle con, const char *dir,
                    uint32_t pid, char *err, size_t errcap)
{
    for (int i = 0; i < EXPORTED; i++) {
        char where[4096 + 64], lit[2 * 4096 + 80], sql[2 * 4096 + 1024];
        snprintf(where, sizeof where, "%s/%s", dir, table_names[i]);
        if (sql_literal(where, lit, sizeof lit)) {
            snprintf(err, errcap, "output path too long");
            return -1;
        }
        snprintf(sql, sizeof sql,
                 "COPY %s TO %s (FORMAT parquet, COMPRESSION zstd, "
                 "PARTITION_BY (%s), OVERWRITE_OR_IGNORE)",
                 exported(i), lit, i == T_ACCESSES ? "pid, tid" : "pid");
        if (run_sql(api, con, sql, err, errcap) ||
            empty_partition(api, con, dir, i, pid, err, errcap))
            return -1;
    }
    return 0;
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
    int n = snprintf(part, sizeof part, "%s/%s", dir, table_names[i]);
    mkdir(part, 0777);
    n += snprintf(part + n, sizeof part - (size_t)n, "/pid=%u", pid);
    mkdir(part, 0777);
    if (i == T_ACCESSES) {
        n += snprintf(part + n, sizeof part - (size_t)n, "/tid=%u", tid);
        mkdir(part, 0777);
    }
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
             i == T_ACCESSES ? "pid, tid" : "pid", exported(i), where, lit, split);
    if (run_sql(api, con, sql, err, errcap))
        return -1;
    return is_empty_dir(part) ? empty_file(api, con, i, part, err, errcap) : 0;
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
    duckdb_handle db = NULL, con = NULL;
    sink_state s = { .api = &api, .pid = pid, .err = err, .errcap = errcap };
    /* every row's run: the number memtap run gave it (NULL for none) */
    char run_row[128];
    snprintf(run_row, sizeof run_row, "INSERT INTO run_id VALUES (%s);",
             run[0] && strspn(run, "0123456789") == strlen(run) ? run : "NULL");
    int rc = -1;
    if (api.open(db_path, &db) != DUCKDB_SUCCESS ||
        api.connect(db, &con) != DUCKDB_SUCCESS)
        snprintf(err, errcap, "DuckDB cannot create %s", db_path);
    else if (run_sql(&api, con, schema, err, errcap) == 0 &&
             run_sql(&api, con, run_row, err, errcap) == 0)
        rc = 0;
    for (int i = 0; rc == 0 && i < TABLES; i++)
        if (api.appender_create(con, NULL, table_names[i], &s.app[i]) !=
            DUCKDB_SUCCESS) {
            snprintf(err, errcap, "DuckDB: no appender for %s",
                     table_names[i]);
            rc = -1;
        }
    export_sink sink = { put_module, put_access, put_block, put_thread,
                         put_frame, &s };
    if (rc == 0 && !(s.names = calloc(1, sizeof *s.names))) {
        snprintf(err, errcap, "out of memory");
        rc = -1;
    }
    if (rc == 0)
        rc = chunk_open(&s);
    if (rc == 0)
        rc = export_rows(t, sym, cache, &sink, progress, arg, err, errcap) ? -1 : 0;
    if (rc == 0)
        rc = chunk_flush(&s);
    if (s.chunk)
        api.destroy_data_chunk(&s.chunk);
    if (s.names)
        name_cache_free(s.names);
    free(s.names);
    for (int i = 0; i < TABLES; i++)
        if (s.app[i] && api.appender_destroy(&s.app[i]) != DUCKDB_SUCCESS &&
            rc == 0) { /* flushes the last rows */
            snprintf(err, errcap, "DuckDB: %s: cannot write the last rows",
                     table_names[i]);
            rc = -1;
        }
    for (int i = 0; rc == 0 && split && i < EXPORTED; i++)
        for (size_t k = 0; rc == 0 && k < (i == T_ACCESSES ? s.ntids : 1); k++)
            rc = copy_split(&api, con, dir, i, pid, i == T_ACCESSES ? s.tids[k] : 0,
                            split, err, errcap);
    if (rc == 0 && !split)
        rc = copy_out(&api, con, dir, pid, err, errcap);
    free(s.tids);
    if (con)
        api.disconnect(&con);
    if (db)
        api.close(&db);
    remove_database(db_path);
    /* DuckDB's threads and thread-local state outlive close: the library
     * stays loaded until the command exits */
    return rc;
}
