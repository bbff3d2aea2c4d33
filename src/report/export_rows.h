/*
 * export_rows.h - a trace as the rows of the tables the database exports
 * write (SQLite, Parquet): accesses named as `memtap show`
 * names them, heap blocks and mappings with their allocation and release,
 * modules and threads.  The walk owns naming and the heap; a sink only
 * stores rows.
 */
#ifndef MEMTAP_REPORT_EXPORT_ROWS_H
#define MEMTAP_REPORT_EXPORT_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "memtap/trace.h"
#include "report/cache_model.h"
#include "symbols/symbolizer.h"

typedef struct export_access {
    uint32_t tid;
    uint64_t seq;
    char kind[2];            /* "L", "S", "Y", "W", "G" */
    uint64_t pc, address, size;
    int has_source;          /* a copy (Y): source holds where from */
    uint64_t source;
    uint32_t count;          /* accesses the record stands for */
    const char *function;    /* "main" (the symbol, without +offset) */
    const char *object;      /* "<malloc0001@main+26>", "config", ... */
    uint64_t object_key;     /* one number per name (a heap block's, a
                                symbol's, a section's...; 0: none): a
                                sink may keep what it made of the name */
    const char *region;      /* "[heap]", "[prog]", ... */
    uint64_t block;          /* a heap block's allocation number + 1; 0:
                                no heap block */
    const char *site;        /* its allocation site as `memtap report`
                                names it ("malloc@main+26"), else NULL */
    uint64_t site_key;       /* one number per site (0 with no site): a
                                sink may keep what it made of the name */
    int modeled;             /* the cache model ran (export --cache): */
    uint32_t d1_misses;      /* the access's lines that missed D1 */
    uint32_t ll_misses;      /* ... and LL */
    const char *miss_cause;  /* the first D1 miss's cause (cachesim.h),
                                or NULL */
} export_access;

typedef struct export_block {
    uint64_t number;         /* the allocation number */
    char kind[2];            /* "M", "C", "R", "P", "E" */
    uint64_t address, size;
    uint64_t site;           /* the site it is named after, as `memtap
                                report` names it: its call site, or a
                                frame past allocator wrappers */
    const char *site_name;   /* "main+26" */
    uint32_t stack;          /* its call stack (export_frame.stack), or 0 */
    uint32_t tid;
    uint64_t alloc_seq;
    int freed;               /* free_seq is set (else live at the end) */
    uint64_t free_seq;
} export_block;

/* A frame of a call stack blocks name (inlined functions are frames of
 * their own, at the same pc). */
typedef struct export_frame {
    uint32_t stack;          /* one number per distinct stack */
    uint32_t depth;          /* 0: the innermost */
    uint64_t pc;             /* the return address */
    const char *frame;       /* "make_node llist.c:15" */
} export_frame;

typedef struct export_thread {
    uint32_t tid;
    uint64_t first_seq, last_seq, events;
} export_thread;

/* Where rows go: each returns 0, or non-zero after saying why (in the
 * sink's own error buffer), which stops the walk. */
typedef struct export_sink {
    int (*module)(void *arg, const memtap_module *m, const char *build_id);
    int (*access)(void *arg, const export_access *a);
    int (*block)(void *arg, const export_block *b);  /* once released, or
                                                         at the end */
    int (*thread)(void *arg, const export_thread *t); /* at the end */
    int (*frame)(void *arg, const export_frame *f);   /* at the end */
    void *arg;
} export_sink;

/* Walks the trace from its start into the sink, each access run through
 * a model of the data caches first when cache (its D1 and LL) is not
 * NULL; progress, when not NULL, is called once per event.  Returns 0; 1 when a sink failed; -1 with the
 * reason in err for the walk's own errors (out of memory, the trace). */
int export_rows(memtap_trace *t, symbolizer *sym, const cache_geometry *cache,
                const export_sink *sink,
                void (*progress)(void *), void *parg, char *err,
                size_t errcap);

#endif
