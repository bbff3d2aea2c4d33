/*
 * export_parquet.c - a trace as Parquet files written by DuckDB
 * (export_parquet.h).  DuckDB's library is loaded at run time (dlopen: it
 * comes from the npm registry, not from Debian, and only this export needs
 * it); the few C API calls used are declared here as DuckDB documents
 * them.  Rows go through appenders into a DuckDB database file beside the
 * output (so that memory stays flat whatever the trace's size), then
 * COPY ... (FORMAT parquet, PARTITION_BY ...) writes the files and the
 * database file is removed.
 */
#define _GNU_SOURCE
#include "report/export_parquet.h"

#include "report/export_rows.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
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
};

enum { T_ACCESSES, T_BLOCKS, T_MODULES, T_THREADS, TABLES };
static const char *const table_names[TABLES] = { "accesses", "blocks",
                                                 "modules", "threads" };

static const char schema[] =
    "SET memory_limit='256MB'; SET preserve_insertion_order=false;"
    "CREATE TABLE accesses(pid UINTEGER, tid UINTEGER, seq UBIGINT,"
    " kind VARCHAR, pc UBIGINT, address UBIGINT, size UBIGINT,"
    " source UBIGINT, count UINTEGER, function VARCHAR, object VARCHAR,"
    " region VARCHAR);"
    "CREATE TABLE blocks(pid UINTEGER, number UBIGINT, kind VARCHAR,"
    " address UBIGINT, size UBIGINT, site UBIGINT, site_name VARCHAR,"
    " tid UINTEGER, alloc_seq UBIGINT, free_seq UBIGINT);"
    "CREATE TABLE modules(pid UINTEGER, id UINTEGER, path VARCHAR,"
    " base UBIGINT, build_id VARCHAR);"
    "CREATE TABLE threads(pid UINTEGER, tid UINTEGER, first_seq UBIGINT,"
    " last_seq UBIGINT, events UBIGINT);";

typedef struct sink_state {
    duckdb_api *api;
    duckdb_handle app[TABLES];
    uint32_t pid;
    char *err;
    size_t errcap;
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

static int put_access(void *arg, const export_access *a)
{
    sink_state *s = arg;
    duckdb_api *d = s->api;
    duckdb_handle app = s->app[T_ACCESSES];
    d->append_uint32(app, s->pid);
    d->append_uint32(app, a->tid);
    d->append_uint64(app, a->seq);
    d->append_varchar(app, a->kind);
    d->append_uint64(app, a->pc);
    d->append_uint64(app, a->address);
    d->append_uint64(app, a->size);
    if (a->has_source)
        d->append_uint64(app, a->source);
    else
        d->append_null(app);
    d->append_uint32(app, a->count);
    d->append_varchar(app, a->function);
    d->append_varchar(app, a->object);
    d->append_varchar(app, a->region);
    return end_row(s, T_ACCESSES);
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
    return end_row(s, T_BLOCKS);
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

/* COPY of every table into dir: accesses partitioned by process and
 * thread, the others by process. */
static int copy_out(duckdb_api *api, duckdb_handle con, const char *dir,
                    char *err, size_t errcap)
{
    for (int i = 0; i < TABLES; i++) {
        char where[4096 + 64], lit[2 * 4096 + 80], sql[2 * 4096 + 256];
        snprintf(where, sizeof where, "%s/%s", dir, table_names[i]);
        if (sql_literal(where, lit, sizeof lit)) {
            snprintf(err, errcap, "output path too long");
            return -1;
        }
        snprintf(sql, sizeof sql,
                 "COPY %s TO %s (FORMAT parquet, COMPRESSION zstd, "
                 "PARTITION_BY (%s), OVERWRITE_OR_IGNORE)",
                 table_names[i], lit, i == T_ACCESSES ? "pid, tid" : "pid");
        if (run_sql(api, con, sql, err, errcap))
            return -1;
    }
    return 0;
}

/* dir is new, or an earlier export's that has no files of this pid. */
static int check_output(const char *dir, uint32_t pid, char *err,
                        size_t errcap)
{
    char mine[4096];
    snprintf(mine, sizeof mine, "%s/accesses/pid=%u", dir, pid);
    if (access(mine, F_OK) == 0) {
        snprintf(err, errcap, "holds process %u's files already (remove "
                              "them first)", pid);
        return -1;
    }
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        snprintf(err, errcap, "%s", strerror(errno));
        return -1;
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

int export_parquet(memtap_trace *t, symbolizer *sym, const char *lib,
                   const char *dir, void (*progress)(void *), void *arg,
                   char *err, size_t errcap)
{
    uint32_t pid = memtap_trace_header(t)->pid;
    duckdb_api api;
    memset(&api, 0, sizeof api);
    if (check_output(dir, pid, err, errcap) ||
        load_api(&api, lib, err, errcap)) {
        if (api.lib)
            dlclose(api.lib);
        return -1;
    }
    char db_path[4096];
    snprintf(db_path, sizeof db_path, "%s/.memtap-export-%u.duckdb", dir, pid);
    remove_database(db_path);
    duckdb_handle db = NULL, con = NULL;
    sink_state s = { &api, { NULL }, pid, err, errcap };
    int rc = -1;
    if (api.open(db_path, &db) != DUCKDB_SUCCESS ||
        api.connect(db, &con) != DUCKDB_SUCCESS)
        snprintf(err, errcap, "DuckDB cannot create %s", db_path);
    else if (run_sql(&api, con, schema, err, errcap) == 0)
        rc = 0;
    for (int i = 0; rc == 0 && i < TABLES; i++)
        if (api.appender_create(con, NULL, table_names[i], &s.app[i]) !=
            DUCKDB_SUCCESS) {
            snprintf(err, errcap, "DuckDB: no appender for %s",
                     table_names[i]);
            rc = -1;
        }
    export_sink sink = { put_module, put_access, put_block, put_thread, &s };
    if (rc == 0)
        rc = export_rows(t, sym, &sink, progress, arg, err, errcap) ? -1 : 0;
    for (int i = 0; i < TABLES; i++)
        if (s.app[i] && api.appender_destroy(&s.app[i]) != DUCKDB_SUCCESS &&
            rc == 0) { /* flushes the last rows */
            snprintf(err, errcap, "DuckDB: %s: cannot write the last rows",
                     table_names[i]);
            rc = -1;
        }
    if (rc == 0)
        rc = copy_out(&api, con, dir, err, errcap);
    if (con)
        api.disconnect(&con);
    if (db)
        api.close(&db);
    remove_database(db_path);
    /* DuckDB's threads and thread-local state outlive close: the library
     * stays loaded until the command exits */
    return rc;
}
