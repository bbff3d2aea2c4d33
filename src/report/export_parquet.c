/*
 * export_parquet.c - a trace as Parquet files (export_parquet.h): the
 * walk (export_rows.c) names each row, and the row goes straight into the
 * file of its table's partition, which memtap's Parquet writer
 * (parquet.h) keeps a row group at a time.  Owns the layout of the
 * output directory: the partitions, the split into files, the empty
 * file of a table with no rows, and the mark that says whose run the
 * directory holds.
 */
#define _GNU_SOURCE
#include "report/export_parquet.h"

#include "report/export_rows.h"
#include "report/parquet.h"
#include "sys/utf8.h"
#include "trace/info.h"
#include "trace/tool.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { T_ACCESSES, T_BLOCKS, T_MODULES, T_THREADS, T_STACKS, TABLES };
static const char *const table_names[TABLES] = { "accesses", "blocks", "modules",
                                                 "threads", "stacks" };

/* Each table's columns; the partitions' (pid, and the accesses' tid) are
 * in the directories' names, the run in every row. */
enum { A_SEQ, A_KIND, A_PC, A_ADDRESS, A_SIZE, A_SOURCE, A_COUNT, A_FUNCTION,
       A_OBJECT, A_REGION, A_BLOCK, A_SITE, A_D1_MISSES, A_LL_MISSES,
       A_MISS_CAUSE, A_RUN };
static const pq_column access_columns[] = {
    { "seq", PQ_U64, 0 },        { "kind", PQ_STRING, 0 },     { "pc", PQ_U64, 0 },
    { "address", PQ_U64, 0 },    { "size", PQ_U64, 0 },        { "source", PQ_U64, 1 },
    { "count", PQ_U32, 0 },      { "function", PQ_STRING, 0 }, { "object", PQ_STRING, 0 },
    { "region", PQ_STRING, 0 },  { "block", PQ_U64, 1 },       { "site", PQ_STRING, 1 },
    { "d1_misses", PQ_U32, 1 },  { "ll_misses", PQ_U32, 1 },   { "miss_cause", PQ_STRING, 1 },
    { "run", PQ_U64, 1 },
};
enum { B_NUMBER, B_KIND, B_ADDRESS, B_SIZE, B_SITE, B_SITE_NAME, B_TID, B_ALLOC_SEQ,
       B_FREE_SEQ, B_STACK, B_RUN };
static const pq_column block_columns[] = {
    { "number", PQ_U64, 0 },     { "kind", PQ_STRING, 0 },     { "address", PQ_U64, 0 },
    { "size", PQ_U64, 0 },       { "site", PQ_U64, 0 },        { "site_name", PQ_STRING, 0 },
    { "tid", PQ_U32, 0 },        { "alloc_seq", PQ_U64, 0 },   { "free_seq", PQ_U64, 1 },
    { "stack", PQ_U32, 1 },      { "run", PQ_U64, 1 },
};
static const pq_column module_columns[] = {
    { "id", PQ_U32, 0 },         { "path", PQ_STRING, 0 },     { "base", PQ_U64, 0 },
    { "build_id", PQ_STRING, 0 }, { "run", PQ_U64, 1 },
};
static const pq_column thread_columns[] = {
    { "tid", PQ_U32, 0 },        { "first_seq", PQ_U64, 0 },   { "last_seq", PQ_U64, 0 },
    { "events", PQ_U64, 0 },     { "run", PQ_U64, 1 },
};
static const pq_column stack_columns[] = {
    { "stack", PQ_U32, 0 },      { "depth", PQ_U32, 0 },       { "pc", PQ_U64, 0 },
    { "frame", PQ_STRING, 0 },   { "run", PQ_U64, 1 },
};
#define COLUMNS(a) a, sizeof a / sizeof *a
static const struct {
    const pq_column *cols;
    size_t n;
} table_columns[TABLES] = {
    { COLUMNS(access_columns) }, { COLUMNS(block_columns) }, { COLUMNS(module_columns) },
    { COLUMNS(thread_columns) }, { COLUMNS(stack_columns) },
};

/* A row group's most rows (DuckDB's own), fewer when the threads' files
 * together would hold more than GROUPS_ROWS in memory, or a split's file
 * would be much smaller; never fewer than GROUP_ROWS_MIN. */
#define GROUP_ROWS 122880u
#define GROUPS_ROWS (1u << 20)
#define GROUP_ROWS_MIN 1024u

/* A partition's files: the one open (or NULL), how many came before. */
typedef struct part {
    uint32_t tid;                /* the accesses': the thread's */
    pq_file *f;
    unsigned files;
} part;

typedef struct sink_state {
    pq_shared *shared;
    const char *dir;
    uint32_t pid;
    int has_run;                 /* the trace has a run number: */
    uint64_t run;
    uint64_t split;              /* a file's bytes, about (0: one file) */
    uint32_t group_rows;
    part tables[TABLES];         /* the accesses' are the threads' */
    part *threads;
    size_t nthreads, threads_cap, at;
    char *text;                  /* a string made valid UTF-8 */
    size_t text_cap;
    char *err;
    size_t errcap;
} sink_state;

/* Makes each directory of path in turn (from `from` bytes on); 0, or -1
 * with the reason in err. */
static int make_dirs(char *path, size_t from, char *err, size_t errcap)
{
    for (char *p = path + from;; p++) {
        if (*p && *p != '/')
            continue;
        char c = *p;
        *p = '\0';
        int rc = mkdir(path, 0777) != 0 && errno != EEXIST ? -1 : 0;
        if (rc)
            snprintf(err, errcap, "%s: %s", path, strerror(errno));
        *p = c;
        if (rc || !c)
            return rc;
    }
}

/* Opens the next file of table i's partition p; 0, or -1 with the reason
 * in the state's err. */
static int open_part(sink_state *s, int i, part *p)
{
    char path[4096 + 128];
    int n = i == T_ACCESSES ? snprintf(path, sizeof path, "%s/%s/pid=%u/tid=%u", s->dir,
                                       table_names[i], s->pid, p->tid)
                            : snprintf(path, sizeof path, "%s/%s/pid=%u", s->dir,
                                       table_names[i], s->pid);
    if (n < 0 || n >= (int)sizeof path - 32) {
        snprintf(s->err, s->errcap, "output path too long");
        return -1;
    }
    if (make_dirs(path, strlen(s->dir) + 1, s->err, s->errcap))
        return -1;
    snprintf(path + n, sizeof path - (size_t)n, "/data_%u.parquet", p->files);
    uint32_t rows = i == T_ACCESSES ? s->group_rows : GROUP_ROWS;
    if (s->split && s->split / 8 < rows) /* a group of at most 8 bytes a row */
        rows = s->split / 8 > GROUP_ROWS_MIN ? (uint32_t)(s->split / 8) : GROUP_ROWS_MIN;
    p->f = pq_open(s->shared, path, table_columns[i].cols, table_columns[i].n, rows, s->err,
                   s->errcap);
    return p->f ? 0 : -1;
}

/* Closes p's file; 0, or -1 with the reason in the state's err. */
static int close_part(sink_state *s, part *p)
{
    if (!p->f)
        return 0;
    int rc = pq_close(p->f, s->err, s->errcap);
    p->f = NULL;
    p->files++;
    return rc;
}

/* The file table i's next row goes into (p's, opened when none is):
 * NULL after saying why. */
static pq_file *row_file(sink_state *s, int i, part *p)
{
    return p->f || open_part(s, i, p) == 0 ? p->f : NULL;
}

/* Number v as column c of f's row when there is one (there), else NULL. */
static void put_number(pq_file *f, size_t c, int there, uint64_t v)
{
    if (there)
        pq_u64(f, c, v);
    else
        pq_null(f, c);
}

/* Ends the row of p's file (table i's), the run's number last; with
 * --split a file past the size gives way to the next.  0, or 1 after
 * saying why. */
static int end_row(sink_state *s, part *p, size_t run_column)
{
    put_number(p->f, run_column, s->has_run, s->run);
    if (pq_end_row(p->f) != 0 || (s->split && pq_size(p->f) >= s->split))
        return close_part(s, p) ? 1 : 0;
    return 0;
}

/* String v (NULL: "") as column c of f's row, made valid UTF-8 (what is
 * not becomes U+FFFD), and known by *key from then on when key is not
 * NULL (pq_str_key); 0, or 1 after saying why. */
static int put_text(sink_state *s, pq_file *f, size_t c, const char *v, const uint64_t *key)
{
    size_t n = v ? strlen(v) : 0;
    if (!utf8_ascii(v, n)) {
        if (3 * n > s->text_cap) {
            char *grown = realloc(s->text, 3 * n);
            if (!grown)
                goto oom;
            s->text = grown;
            s->text_cap = 3 * n;
        }
        n = utf8_sanitize(v, n, s->text);
        v = s->text;
    }
    v = n ? v : "";
    if ((key ? pq_str_key(f, c, *key, v, n) : pq_str(f, c, v, n)) == 0)
        return 0;
oom:
    snprintf(s->err, s->errcap, "out of memory");
    return 1;
}

/* put_text of a string key stands for (pq_keyed): its bytes are looked
 * at only when the file does not know the key yet; 0, or 1 after saying
 * why. */
static int put_keyed(sink_state *s, pq_file *f, size_t c, uint64_t key, const char *v)
{
    return pq_keyed(f, c, key) ? 0 : put_text(s, f, c, v, &key);
}

/* The part of thread tid's accesses (made on its first); NULL when out
 * of memory. */
static part *thread_part(sink_state *s, uint32_t tid)
{
    if (s->at < s->nthreads && s->threads[s->at].tid == tid)
        return &s->threads[s->at];
    for (s->at = 0; s->at < s->nthreads; s->at++)
        if (s->threads[s->at].tid == tid)
            return &s->threads[s->at];
    if (s->nthreads == s->threads_cap) {
        size_t cap = s->threads_cap ? 2 * s->threads_cap : 8;
        part *p = realloc(s->threads, cap * sizeof *p);
        if (!p)
            return NULL;
        s->threads = p;
        s->threads_cap = cap;
    }
    s->threads[s->nthreads] = (part){ tid, NULL, 0 };
    return &s->threads[s->nthreads++];
}

static int put_access(void *arg, const export_access *a)
{
    sink_state *s = arg;
    part *p = thread_part(s, a->tid);
    if (!p) {
        snprintf(s->err, s->errcap, "out of memory");
        return 1;
    }
    pq_file *f = row_file(s, T_ACCESSES, p);
    if (!f)
        return 1;
    pq_u64(f, A_SEQ, a->seq);
    pq_u64(f, A_PC, a->pc);
    pq_u64(f, A_ADDRESS, a->address);
    pq_u64(f, A_SIZE, a->size);
    pq_u64(f, A_COUNT, a->count);
    put_number(f, A_SOURCE, a->has_source, a->source);
    put_number(f, A_BLOCK, a->block != 0, a->block - 1);
    put_number(f, A_D1_MISSES, a->modeled, a->d1_misses);
    put_number(f, A_LL_MISSES, a->modeled, a->ll_misses);
    if (!a->block)
        pq_null(f, A_SITE);
    else if (put_keyed(s, f, A_SITE, a->site_key, a->site))
        return 1;
    if (!a->miss_cause)
        pq_null(f, A_MISS_CAUSE);
    /* keys: the kind's letter, the function's instruction, the cause's and
     * the region's own addresses (names the walk keeps, unchanged), the
     * object's (export_access) */
    if ((a->miss_cause && put_keyed(s, f, A_MISS_CAUSE, (uintptr_t)a->miss_cause,
                                    a->miss_cause)) ||
        put_keyed(s, f, A_KIND, (uint8_t)a->kind[0], a->kind) ||
        put_keyed(s, f, A_FUNCTION, a->pc, a->function) ||
        put_keyed(s, f, A_REGION, (uintptr_t)a->region, a->region) ||
        (a->object_key ? put_keyed(s, f, A_OBJECT, a->object_key, a->object)
                       : put_text(s, f, A_OBJECT, a->object, NULL)))
        return 1;
    return end_row(s, p, A_RUN);
}

static int put_block(void *arg, const export_block *b)
{
    sink_state *s = arg;
    part *p = &s->tables[T_BLOCKS];
    pq_file *f = row_file(s, T_BLOCKS, p);
    if (!f)
        return 1;
    pq_u64(f, B_NUMBER, b->number);
    pq_u64(f, B_ADDRESS, b->address);
    pq_u64(f, B_SIZE, b->size);
    pq_u64(f, B_SITE, b->site);
    pq_u64(f, B_TID, b->tid);
    pq_u64(f, B_ALLOC_SEQ, b->alloc_seq);
    put_number(f, B_FREE_SEQ, b->freed, b->free_seq);
    put_number(f, B_STACK, b->stack != 0, b->stack);
    if (put_text(s, f, B_KIND, b->kind, NULL) ||
        put_text(s, f, B_SITE_NAME, b->site_name, NULL))
        return 1;
    return end_row(s, p, B_RUN);
}

static int put_frame(void *arg, const export_frame *x)
{
    sink_state *s = arg;
    part *p = &s->tables[T_STACKS];
    pq_file *f = row_file(s, T_STACKS, p);
    if (!f)
        return 1;
    pq_u64(f, 0, x->stack);
    pq_u64(f, 1, x->depth);
    pq_u64(f, 2, x->pc);
    return put_text(s, f, 3, x->frame, NULL) || end_row(s, p, 4);
}

static int put_module(void *arg, const memtap_module *m, const char *build_id)
{
    sink_state *s = arg;
    part *p = &s->tables[T_MODULES];
    pq_file *f = row_file(s, T_MODULES, p);
    if (!f)
        return 1;
    pq_u64(f, 0, m->id);
    pq_u64(f, 2, m->base);
    return put_text(s, f, 1, m->path, NULL) || put_text(s, f, 3, build_id, NULL) ||
           end_row(s, p, 4);
}

static int put_thread(void *arg, const export_thread *t)
{
    sink_state *s = arg;
    part *p = &s->tables[T_THREADS];
    pq_file *f = row_file(s, T_THREADS, p);
    if (!f)
        return 1;
    pq_u64(f, 0, t->tid);
    pq_u64(f, 1, t->first_seq);
    pq_u64(f, 2, t->last_seq);
    pq_u64(f, 3, t->events);
    return end_row(s, p, 4);
}

/* Closes every file; a table with no rows of this process is one empty
 * file (the accesses' in the process's own thread's partition), so that
 * read_parquet of DIR/TABLE and all below finds every table.  0, or -1
 * with a failure's reason in the state's err (the last one's). */
static int finish(sink_state *s)
{
    int rc = 0;
    size_t used = 0; /* threads with files */
    for (size_t k = 0; k < s->nthreads; k++) {
        used += s->threads[k].f || s->threads[k].files;
        rc |= close_part(s, &s->threads[k]);
    }
    part own = { s->pid, NULL, 0 };
    if (!rc && !used)
        rc = open_part(s, T_ACCESSES, &own) || close_part(s, &own);
    for (int i = T_ACCESSES + 1; i < TABLES; i++) {
        part *p = &s->tables[i];
        if (!rc && !p->f && !p->files)
            rc = open_part(s, i, p);
        rc |= close_part(s, p);
    }
    return rc ? -1 : 0;
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

int export_parquet(memtap_trace *t, symbolizer *sym, const cache_geometry *cache,
                   const char *dir, uint64_t split, void (*progress)(void *),
                   void *arg, char *err, size_t errcap)
{
    uint32_t pid = memtap_trace_header(t)->pid;
    char run[64];
    trace_info_copy(t, "run", run, sizeof run);
    if (check_output(dir, pid, run, err, errcap))
        return -1;
    size_t threads = trace_threads(t, NULL, 0);
    uint32_t rows = GROUP_ROWS;
    if (threads > GROUPS_ROWS / GROUP_ROWS) /* the threads' groups in memory */
        rows = GROUPS_ROWS / threads > GROUP_ROWS_MIN ? (uint32_t)(GROUPS_ROWS / threads)
                                                      : GROUP_ROWS_MIN;
    sink_state s = { .shared = pq_shared_create(), .dir = dir, .pid = pid, .split = split,
                     .group_rows = rows, .err = err, .errcap = errcap };
    if (!s.shared) {
        snprintf(err, errcap, "out of memory");
        return -1;
    }
    /* every row's run: the number memtap run gave it (NULL for none) */
    s.has_run = run[0] && strspn(run, "0123456789") == strlen(run);
    s.run = s.has_run ? strtoull(run, NULL, 10) : 0;
    export_sink sink = { put_module, put_access, put_block, put_thread, put_frame, &s };
    char walk_err[512] = "";
    int rc = export_rows(t, sym, cache, &sink, progress, arg, walk_err, sizeof walk_err);
    if (rc < 0)
        snprintf(err, errcap, "%s", walk_err);
    if (rc == 0)
        rc = finish(&s);
    for (size_t k = 0; k < s.nthreads; k++)
        if (s.threads[k].f)
            pq_close(s.threads[k].f, walk_err, sizeof walk_err);
    for (int i = 0; i < TABLES; i++)
        if (s.tables[i].f)
            pq_close(s.tables[i].f, walk_err, sizeof walk_err);
    free(s.threads);
    free(s.text);
    pq_shared_destroy(s.shared);
    return rc ? -1 : 0;
}
