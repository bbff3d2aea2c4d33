/*
 * export_sqlite.c - a trace as an SQLite database (export_sqlite.h).
 *
 *   accesses(seq, tid, kind, pc, address, size, source, count,
 *            function -> names, object -> names, region, block,
 *            site -> names, d1_misses, ll_misses, miss_cause)
 *            (the last three from the cache model of export --cache, else
 *            NULL)
 *   blocks(number, kind, address, size, site, site_name -> names, tid,
 *          alloc_seq, free_seq, stack)   heap blocks and mappings
 *   stacks(stack, depth, pc, frame)      the call stacks blocks name
 *   modules(id, path, base, build_id)
 *   threads(tid, first_seq, last_seq, events)
 *   names(id, name)                      objects and functions
 *
 * Names are the ones `memtap show` prints (export_rows.h): a function is
 * the symbol of an instruction, an object the heap block, variable or
 * section an address lies in.  One transaction, no journal: a failed
 * export leaves no database behind.
 */
#include "report/export_sqlite.h"
#include "report/name_cache.h"

#include "report/export_rows.h"

#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NAME_CAP 1024

static const char schema[] =
    "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
    "CREATE TABLE names(id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL);"
    "CREATE TABLE modules(id INTEGER PRIMARY KEY, path TEXT, base INTEGER,"
    " build_id TEXT);"
    "CREATE TABLE threads(tid INTEGER PRIMARY KEY, first_seq INTEGER,"
    " last_seq INTEGER, events INTEGER);"
    "CREATE TABLE blocks(number INTEGER, kind TEXT, address INTEGER,"
    " size INTEGER, site INTEGER, site_name INTEGER REFERENCES names(id),"
    " tid INTEGER, alloc_seq INTEGER, free_seq INTEGER, stack INTEGER);"
    "CREATE TABLE stacks(stack INTEGER, depth INTEGER, pc INTEGER, frame TEXT);"
    "CREATE TABLE accesses(seq INTEGER PRIMARY KEY, tid INTEGER, kind TEXT,"
    " pc INTEGER, address INTEGER, size INTEGER, source INTEGER,"
    " count INTEGER, function INTEGER REFERENCES names(id),"
    " object INTEGER REFERENCES names(id), region TEXT, block INTEGER,"
    " site INTEGER REFERENCES names(id), d1_misses INTEGER, ll_misses INTEGER,"
    " miss_cause TEXT);"
    "BEGIN;";

static const char indexes[] =
    "CREATE INDEX accesses_object ON accesses(object);"
    "CREATE INDEX accesses_pc ON accesses(pc);"
    "CREATE INDEX accesses_thread ON accesses(tid, seq);"
    "CREATE INDEX blocks_address ON blocks(address);"
    "COMMIT;";

typedef struct writer {
    sqlite3 *db;
    sqlite3_stmt *access, *block, *module, *name_add, *name_id, *thread, *frame;
    name_cache *names;
    uint64_t site_key;          /* the last access's site, and its id */
    int64_t site_id;
    char *err;
    size_t errcap;
} writer;

static int fail(writer *w, const char *what)
{
    snprintf(w->err, w->errcap, "%s: %s", what,
             w->db ? sqlite3_errmsg(w->db) : "out of memory");
    return -1;
}

/* The id of a name in names, added on first sight; -1 on error. */
static int64_t name_id(writer *w, const char *name)
{
    int64_t id = name_cache_get(w->names, name);
    if (id >= 0)
        return id;
    sqlite3_bind_text(w->name_add, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_text(w->name_id, 1, name, -1, SQLITE_STATIC);
    if (sqlite3_step(w->name_add) == SQLITE_DONE &&
        sqlite3_step(w->name_id) == SQLITE_ROW)
        id = sqlite3_column_int64(w->name_id, 0);
    sqlite3_reset(w->name_add);
    sqlite3_reset(w->name_id);
    if (id >= 0)
        name_cache_put(w->names, name, id);
    return id;
}

/* Runs a prepared statement bound by the caller, then resets it. */
static int step(writer *w, sqlite3_stmt *s, const char *what)
{
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    return rc == SQLITE_DONE ? 0 : fail(w, what);
}

static int put_access(void *arg, const export_access *a)
{
    writer *w = arg;
    int64_t fid = name_id(w, a->function), oid = name_id(w, a->object);
    int64_t sid = a->site_key == w->site_key ? w->site_id
                  : a->site                   ? name_id(w, a->site) : 0;
    w->site_key = a->site_key;
    w->site_id = sid;
    if (fid < 0 || oid < 0 || sid < 0)
        return fail(w, "names");
    sqlite3_stmt *s = w->access;
    sqlite3_bind_int64(s, 1, (int64_t)a->seq);
    sqlite3_bind_int64(s, 2, a->tid);
    sqlite3_bind_text(s, 3, a->kind, 1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 4, (int64_t)a->pc);
    sqlite3_bind_int64(s, 5, (int64_t)a->address);
    sqlite3_bind_int64(s, 6, (int64_t)a->size);
    if (a->has_source)
        sqlite3_bind_int64(s, 7, (int64_t)a->source);
    else
        sqlite3_bind_null(s, 7);
    sqlite3_bind_int64(s, 8, a->count);
    sqlite3_bind_int64(s, 9, fid);
    sqlite3_bind_int64(s, 10, oid);
    sqlite3_bind_text(s, 11, a->region, -1, SQLITE_STATIC);
    if (a->block) {
        sqlite3_bind_int64(s, 12, (int64_t)(a->block - 1));
        sqlite3_bind_int64(s, 13, sid);
    } else {
        sqlite3_bind_null(s, 12);
        sqlite3_bind_null(s, 13);
    }
    if (a->modeled) {
        sqlite3_bind_int64(s, 14, a->d1_misses);
        sqlite3_bind_int64(s, 15, a->ll_misses);
    } else {
        sqlite3_bind_null(s, 14);
        sqlite3_bind_null(s, 15);
    }
    if (a->miss_cause)
        sqlite3_bind_text(s, 16, a->miss_cause, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(s, 16);
    return step(w, s, "accesses");
}

static int put_block(void *arg, const export_block *b)
{
    writer *w = arg;
    int64_t site = name_id(w, b->site_name);
    if (site < 0)
        return fail(w, "names");
    sqlite3_stmt *s = w->block;
    sqlite3_bind_int64(s, 1, (int64_t)b->number);
    sqlite3_bind_text(s, 2, b->kind, 1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 3, (int64_t)b->address);
    sqlite3_bind_int64(s, 4, (int64_t)b->size);
    sqlite3_bind_int64(s, 5, (int64_t)b->site);
    sqlite3_bind_int64(s, 6, site);
    sqlite3_bind_int64(s, 7, b->tid);
    sqlite3_bind_int64(s, 8, (int64_t)b->alloc_seq);
    if (b->freed)
        sqlite3_bind_int64(s, 9, (int64_t)b->free_seq);
    else
        sqlite3_bind_null(s, 9);
    if (b->stack)
        sqlite3_bind_int64(s, 10, b->stack);
    else
        sqlite3_bind_null(s, 10);
    return step(w, s, "blocks");
}

static int put_frame(void *arg, const export_frame *f)
{
    writer *w = arg;
    sqlite3_bind_int64(w->frame, 1, f->stack);
    sqlite3_bind_int64(w->frame, 2, f->depth);
    sqlite3_bind_int64(w->frame, 3, (int64_t)f->pc);
    sqlite3_bind_text(w->frame, 4, f->frame, -1, SQLITE_STATIC);
    return step(w, w->frame, "stacks");
}

static int put_module(void *arg, const memtap_module *m, const char *build_id)
{
    writer *w = arg;
    sqlite3_bind_int64(w->module, 1, m->id);
    sqlite3_bind_text(w->module, 2, m->path, -1, SQLITE_STATIC);
    sqlite3_bind_int64(w->module, 3, (int64_t)m->base);
    sqlite3_bind_text(w->module, 4, build_id, -1, SQLITE_STATIC);
    return step(w, w->module, "modules");
}

static int put_thread(void *arg, const export_thread *t)
{
    writer *w = arg;
    sqlite3_bind_int64(w->thread, 1, t->tid);
    sqlite3_bind_int64(w->thread, 2, (int64_t)t->first_seq);
    sqlite3_bind_int64(w->thread, 3, (int64_t)t->last_seq);
    sqlite3_bind_int64(w->thread, 4, (int64_t)t->events);
    return step(w, w->thread, "threads");
}

static int prepare(writer *w)
{
    static const struct { size_t at; const char *sql; } stmts[] = {
        { offsetof(writer, access),
          "INSERT INTO accesses VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)" },
        { offsetof(writer, block),
          "INSERT INTO blocks VALUES(?,?,?,?,?,?,?,?,?,?)" },
        { offsetof(writer, frame), "INSERT INTO stacks VALUES(?,?,?,?)" },
        { offsetof(writer, module), "INSERT INTO modules VALUES(?,?,?,?)" },
        { offsetof(writer, name_add), "INSERT OR IGNORE INTO names(name) VALUES(?)" },
        { offsetof(writer, name_id), "SELECT id FROM names WHERE name=?" },
        { offsetof(writer, thread), "INSERT INTO threads VALUES(?,?,?,?)" },
    };
    for (size_t i = 0; i < sizeof stmts / sizeof *stmts; i++)
        if (sqlite3_prepare_v2(w->db, stmts[i].sql, -1,
                               (sqlite3_stmt **)((char *)w + stmts[i].at),
                               NULL) != SQLITE_OK)
            return fail(w, "prepare");
    return 0;
}

static void writer_close(writer *w)
{
    sqlite3_stmt *all[] = { w->access, w->block, w->module, w->name_add,
                            w->name_id, w->thread, w->frame };
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        sqlite3_finalize(all[i]);
    if (w->names)
        name_cache_free(w->names);
    free(w->names);
    sqlite3_close(w->db);
}

int export_sqlite(memtap_trace *t, symbolizer *sym, const cache_geometry *cache,
                  const char *path,
                  void (*progress)(void *), void *arg, char *err,
                  size_t errcap)
{
    writer w;
    memset(&w, 0, sizeof w);
    w.err = err;
    w.errcap = errcap;
    if (access(path, F_OK) == 0) {
        snprintf(err, errcap, "exists already (remove it first)");
        return -1;
    }
    w.names = calloc(1, sizeof *w.names);
    int rc = 0;
    if (!w.names) {
        rc = fail(&w, "memory");
    } else if (sqlite3_open_v2(path, &w.db,
                               SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                                   SQLITE_OPEN_NOMUTEX, /* one thread */
                               NULL) != SQLITE_OK ||
               sqlite3_exec(w.db, schema, NULL, NULL, NULL) != SQLITE_OK) {
        rc = fail(&w, "create");
    } else {
        rc = prepare(&w);
    }
    export_sink sink = { put_module, put_access, put_block, put_thread,
                         put_frame, &w };
    if (rc == 0)
        rc = export_rows(t, sym, cache, &sink, progress, arg, err, errcap);
    if (rc == 0 && sqlite3_exec(w.db, indexes, NULL, NULL, NULL) != SQLITE_OK)
        rc = fail(&w, "index");
    writer_close(&w);
    if (rc != 0)
        unlink(path); /* nothing half written */
    return rc ? -1 : 0;
}
