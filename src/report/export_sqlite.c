/*
 * export_sqlite.c - a trace as an SQLite database (export_sqlite.h).
 *
 *   accesses(seq, tid, kind, pc, address, size, source, count,
 *            function -> names, object -> names, region)
 *   blocks(number, kind, address, size, site, site_name -> names, tid,
 *          alloc_seq, free_seq)          heap blocks and mappings
 *   modules(id, path, base, build_id)
 *   threads(tid, first_seq, last_seq, events)
 *   names(id, name)                      objects and functions
 *
 * Names are the ones `memtap show` prints: a function is the symbol of an
 * instruction, an object the heap block, variable or section an address
 * lies in.  One transaction, no journal: a failed export leaves no
 * database behind.
 */
#include "report/export_sqlite.h"

#include "report/render.h"

#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NAME_CAP 1024
#define NAME_SLOTS 4096u          /* names kept with their ids */

static const char schema[] =
    "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
    "CREATE TABLE names(id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL);"
    "CREATE TABLE modules(id INTEGER PRIMARY KEY, path TEXT, base INTEGER,"
    " build_id TEXT);"
    "CREATE TABLE threads(tid INTEGER PRIMARY KEY, first_seq INTEGER,"
    " last_seq INTEGER, events INTEGER);"
    "CREATE TABLE blocks(number INTEGER, kind TEXT, address INTEGER,"
    " size INTEGER, site INTEGER, site_name INTEGER REFERENCES names(id),"
    " tid INTEGER, alloc_seq INTEGER, free_seq INTEGER);"
    "CREATE TABLE accesses(seq INTEGER PRIMARY KEY, tid INTEGER, kind TEXT,"
    " pc INTEGER, address INTEGER, size INTEGER, source INTEGER,"
    " count INTEGER, function INTEGER REFERENCES names(id),"
    " object INTEGER REFERENCES names(id), region TEXT);"
    "BEGIN;";

static const char indexes[] =
    "CREATE INDEX accesses_object ON accesses(object);"
    "CREATE INDEX accesses_pc ON accesses(pc);"
    "CREATE INDEX accesses_thread ON accesses(tid, seq);"
    "CREATE INDEX blocks_address ON blocks(address);"
    "COMMIT;";

typedef struct name_slot {
    char *name;
    int64_t id;
} name_slot;

typedef struct writer {
    sqlite3 *db;
    sqlite3_stmt *access, *block, *freed, *unmapped, *name_add, *name_id,
        *thread;
    renderer *r;
    name_slot *names;
    char *err;
    size_t errcap;
    struct { uint32_t tid; uint64_t first, last, events; } *threads;
    size_t nthreads, threads_cap;
} writer;

static int fail(writer *w, const char *what)
{
    snprintf(w->err, w->errcap, "%s: %s", what,
             w->db ? sqlite3_errmsg(w->db) : "out of memory");
    return -1;
}

static uint32_t name_hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* The id of a name in names, added on first sight; -1 on error. */
static int64_t name_id(writer *w, const char *name)
{
    name_slot *slot = &w->names[name_hash(name) % NAME_SLOTS];
    if (slot->name && strcmp(slot->name, name) == 0)
        return slot->id;
    int64_t id = -1;
    sqlite3_bind_text(w->name_add, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_text(w->name_id, 1, name, -1, SQLITE_STATIC);
    if (sqlite3_step(w->name_add) == SQLITE_DONE &&
        sqlite3_step(w->name_id) == SQLITE_ROW)
        id = sqlite3_column_int64(w->name_id, 0);
    sqlite3_reset(w->name_add);
    sqlite3_reset(w->name_id);
    char *copy = id >= 0 ? strdup(name) : NULL;
    if (copy) {
        free(slot->name);
        slot->name = copy;
        slot->id = id;
    }
    return id;
}

/* Runs a prepared statement bound by the caller, then resets it. */
static int step(writer *w, sqlite3_stmt *s, const char *what)
{
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    return rc == SQLITE_DONE ? 0 : fail(w, what);
}

static int count_thread(writer *w, uint32_t tid, uint64_t seq)
{
    for (size_t i = w->nthreads; i-- > 0;) /* few threads, recent last */
        if (w->threads[i].tid == tid) {
            w->threads[i].last = seq;
            w->threads[i].events++;
            return 0;
        }
    if (w->nthreads == w->threads_cap) {
        size_t cap = w->threads_cap ? 2 * w->threads_cap : 16;
        void *p = realloc(w->threads, cap * sizeof *w->threads);
        if (!p)
            return fail(w, "threads");
        w->threads = p;
        w->threads_cap = cap;
    }
    w->threads[w->nthreads].tid = tid;
    w->threads[w->nthreads].first = w->threads[w->nthreads].last = seq;
    w->threads[w->nthreads++].events = 1;
    return 0;
}

static int add_access(writer *w, const memtap_event *ev)
{
    const memtap_record *x = &ev->rec;
    char data[NAME_CAP], object[NAME_CAP], code[NAME_CAP];
    const char *region = renderer_name_data(w->r, x->addr, data, sizeof data);
    renderer_object_of(data, object, sizeof object);
    const char *fn = renderer_name_code(w->r, x->pc, code, sizeof code);
    size_t flen = strcspn(fn, "+ "); /* the symbol, without "+offset" */
    char function[NAME_CAP];
    snprintf(function, sizeof function, "%.*s", (int)flen, fn);
    int64_t fid = name_id(w, function), oid = name_id(w, object);
    if (fid < 0 || oid < 0)
        return fail(w, "names");
    char kind[2] = { (char)x->kind, 0 };
    sqlite3_stmt *s = w->access;
    sqlite3_bind_int64(s, 1, (int64_t)x->seq);
    sqlite3_bind_int64(s, 2, ev->tid);
    sqlite3_bind_text(s, 3, kind, 1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(s, 4, (int64_t)x->pc);
    sqlite3_bind_int64(s, 5, (int64_t)x->addr);
    sqlite3_bind_int64(s, 6, (int64_t)x->size);
    if (x->kind == MEMTAP_EV_COPY)
        sqlite3_bind_int64(s, 7, (int64_t)x->addr2);
    else
        sqlite3_bind_null(s, 7);
    sqlite3_bind_int64(s, 8, x->count);
    sqlite3_bind_int64(s, 9, fid);
    sqlite3_bind_int64(s, 10, oid);
    sqlite3_bind_text(s, 11, region, -1, SQLITE_TRANSIENT);
    return step(w, s, "accesses");
}

/* Marks the live blocks at addr (or, for U, inside [addr, addr+size))
 * freed at seq. */
static int release(writer *w, const memtap_record *x, uint64_t addr)
{
    int range = x->kind == MEMTAP_EV_MUNMAP;
    sqlite3_stmt *s = range ? w->unmapped : w->freed;
    sqlite3_bind_int64(s, 1, (int64_t)x->seq);
    sqlite3_bind_int64(s, 2, (int64_t)addr);
    if (range)
        sqlite3_bind_int64(s, 3, (int64_t)(addr + x->size));
    return step(w, s, "blocks");
}

static int add_block(writer *w, const memtap_event *ev)
{
    const memtap_record *x = &ev->rec;
    if ((x->kind == MEMTAP_EV_REALLOC || x->kind == MEMTAP_EV_MREMAP) &&
        x->addr2 && release(w, x, x->addr2))
        return -1;
    if (x->kind == MEMTAP_EV_FREE || x->kind == MEMTAP_EV_MUNMAP)
        return release(w, x, x->addr);
    if ((x->flags & MEMTAP_RF_FAILED) || !x->addr)
        return 0;
    char code[NAME_CAP];
    int64_t site = name_id(w, renderer_name_code(w->r, x->pc, code,
                                                 sizeof code));
    if (site < 0)
        return fail(w, "names");
    char kind[2] = { (char)x->kind, 0 };
    sqlite3_stmt *s = w->block;
    sqlite3_bind_int64(s, 1, (int64_t)x->aux);
    sqlite3_bind_text(s, 2, kind, 1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(s, 3, (int64_t)x->addr);
    sqlite3_bind_int64(s, 4, (int64_t)x->size);
    sqlite3_bind_int64(s, 5, (int64_t)x->pc);
    sqlite3_bind_int64(s, 6, site);
    sqlite3_bind_int64(s, 7, ev->tid);
    sqlite3_bind_int64(s, 8, (int64_t)x->seq);
    return step(w, s, "blocks");
}

static int add_event(writer *w, const memtap_event *ev)
{
    if (count_thread(w, ev->tid, ev->rec.seq))
        return -1;
    if (render_is_access_kind(ev->rec.kind))
        return add_access(w, ev);
    /* a block's row names the heap as it was before the event */
    int rc = render_is_heap_kind(ev->rec.kind) ? add_block(w, ev) : 0;
    renderer_learn(w->r, ev);
    return rc;
}

static int add_modules(writer *w, const memtap_trace *t)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(w->db, "INSERT INTO modules VALUES(?,?,?,?)", -1,
                           &s, NULL) != SQLITE_OK)
        return fail(w, "modules");
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < memtap_trace_module_count(t); i++) {
        const memtap_module *m = memtap_trace_module_at(t, i);
        char id[2 * 32 + 1];
        for (size_t k = 0; k < m->build_id_len; k++)
            snprintf(id + 2 * k, 3, "%02x", m->build_id[k]);
        id[2 * m->build_id_len] = '\0';
        sqlite3_bind_int64(s, 1, m->id);
        sqlite3_bind_text(s, 2, m->path, -1, SQLITE_STATIC);
        sqlite3_bind_int64(s, 3, (int64_t)m->base);
        sqlite3_bind_text(s, 4, id, -1, SQLITE_STATIC);
        rc = step(w, s, "modules");
    }
    sqlite3_finalize(s);
    return rc;
}

static int add_threads(writer *w)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < w->nthreads; i++) {
        sqlite3_bind_int64(w->thread, 1, w->threads[i].tid);
        sqlite3_bind_int64(w->thread, 2, (int64_t)w->threads[i].first);
        sqlite3_bind_int64(w->thread, 3, (int64_t)w->threads[i].last);
        sqlite3_bind_int64(w->thread, 4, (int64_t)w->threads[i].events);
        rc = step(w, w->thread, "threads");
    }
    return rc;
}

static int prepare(writer *w)
{
    static const struct { size_t at; const char *sql; } stmts[] = {
        { offsetof(writer, access),
          "INSERT INTO accesses VALUES(?,?,?,?,?,?,?,?,?,?,?)" },
        { offsetof(writer, block),
          "INSERT INTO blocks VALUES(?,?,?,?,?,?,?,?,NULL)" },
        { offsetof(writer, freed),
          "UPDATE blocks SET free_seq=?1 WHERE address=?2 AND free_seq IS NULL" },
        { offsetof(writer, unmapped),
          "UPDATE blocks SET free_seq=?1 WHERE address>=?2 AND address<?3"
          " AND free_seq IS NULL AND kind IN ('P','E')" },
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
    sqlite3_stmt *all[] = { w->access, w->block, w->freed, w->unmapped,
                            w->name_add, w->name_id, w->thread };
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        sqlite3_finalize(all[i]);
    for (size_t i = 0; w->names && i < NAME_SLOTS; i++)
        free(w->names[i].name);
    free(w->names);
    free(w->threads);
    renderer_destroy(w->r);
    sqlite3_close(w->db);
}

int export_sqlite(memtap_trace *t, symbolizer *sym, const char *path,
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
    render_options ro = { RENDER_MADT, RENDER_SYMBOLIC, 0 };
    w.r = renderer_create(sym, &ro, NULL);
    w.names = calloc(NAME_SLOTS, sizeof *w.names);
    int rc = 0;
    if (!w.r || !w.names) {
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
    if (rc == 0)
        rc = add_modules(&w, t);
    memtap_event ev;
    int walk = 0;
    while (rc == 0 && (walk = memtap_trace_next(t, &ev)) > 0) {
        rc = add_event(&w, &ev);
        if (progress)
            progress(arg);
    }
    if (rc == 0 && walk < 0) {
        snprintf(err, errcap, "%s", memtap_status_string(walk));
        rc = -1;
    }
    if (rc == 0)
        rc = add_threads(&w);
    if (rc == 0 && sqlite3_exec(w.db, indexes, NULL, NULL, NULL) != SQLITE_OK)
        rc = fail(&w, "index");
    writer_close(&w);
    if (rc != 0)
        unlink(path); /* nothing half written */
    return rc;
}
