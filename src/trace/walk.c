/*
 * walk.c - a trace's events as runs of records (trace/walk.h), read on a
 * second CPU while the caller uses them on the first: a thread takes runs
 * from the reader (decompressing and expanding the packed chunks: a
 * quarter of `memtap show --raw`) into a ring of batches the walk takes
 * them from.  A batch refers to the reader's records, which the reader
 * keeps until the walk gives the batch back (trace_keep_stamp): copying
 * them was a sixth of `show --raw`'s CPU.  With one CPU the walk reads
 * the trace itself.
 */
#define _GNU_SOURCE
#include "trace/walk.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

/* The ring holds two chunks of memtap run's (65,536 records): the reader
 * fills it a chunk at a time, decompressing and unpacking the next while
 * the walk takes the batches filled (with three, the walk waited for it:
 * raw lines of the walk's trace 0.24 -> 0.32 s; with five, those of the
 * threads trace, whose four threads' chunks end at different times,
 * 0.48 -> 0.44 s against eight). */
#define BATCHES 8
#define BATCH_RECORDS 16384u

typedef struct run_ref {
    const memtap_record *recs; /* the reader's, kept while the batch is */
    uint32_t n, tid;
    trace_clock clock;       /* trace_run_clock's */
} run_ref;

typedef struct batch {
    run_ref runs[BATCH_RECORDS];
    uint32_t nruns;
    int end;                 /* the walk's last batch: rc says how it ended */
    int rc;
} batch;

struct trace_walk {
    memtap_trace *t;
    int ahead;               /* a thread reads ahead */
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t filled, emptied;
    batch *ring;             /* BATCHES of them, used in turn */
    unsigned full;           /* batches filled and not yet walked */
    unsigned fill_at, walk_at;
    uint64_t given;          /* batches the walk gave back */
    uint32_t run_at;         /* the walk's next run in ring[walk_at] */
    int taken;               /* the walk holds ring[walk_at] */
    int stop;                /* the walk ended early */
    run_ref last;            /* the run trace_walk_next returned last */
};

/* Fills one batch with runs of up to BATCH_RECORDS records in all from
 * the reader; whether the walk ended. */
static int fill(memtap_trace *t, batch *b)
{
    uint32_t nrecs = 0;
    b->nruns = 0;
    b->end = 0;
    while (nrecs < BATCH_RECORDS) {
        const memtap_record *recs;
        uint32_t tid;
        int rc = memtap_trace_next_run(t, &recs, &tid, BATCH_RECORDS - nrecs);
        if (rc <= 0) {
            b->end = 1;
            b->rc = rc;
            return 1;
        }
        run_ref *r = &b->runs[b->nruns++];
        *r = (run_ref){ recs, (uint32_t)rc, tid, { 0, 0, 0, 0 } };
        trace_run_clock(t, &r->clock);
        nrecs += (uint32_t)rc;
    }
    return 0;
}

static void *reader(void *arg)
{
    trace_walk *w = arg;
    for (uint64_t filling = 0; ; filling++) {
        pthread_mutex_lock(&w->lock);
        while (w->full == BATCHES && !w->stop)
            pthread_cond_wait(&w->emptied, &w->lock);
        int stop = w->stop;
        uint64_t given = w->given;
        pthread_mutex_unlock(&w->lock);
        if (stop)
            break;
        /* what batches the walk gave back refer to goes back to the
         * reader; what this one will refer to is kept */
        trace_keep_until(w->t, given);
        trace_keep_stamp(w->t, filling);
        int end = fill(w->t, &w->ring[w->fill_at]);
        pthread_mutex_lock(&w->lock);
        w->fill_at = (w->fill_at + 1) % BATCHES;
        w->full++;
        pthread_cond_signal(&w->filled);
        pthread_mutex_unlock(&w->lock);
        if (end)
            break;
    }
    return NULL;
}

/* Whether this process may run on more than one CPU. */
static int second_cpu(void)
{
    cpu_set_t set;
    return sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 1;
}

trace_walk *trace_walk_open(memtap_trace *t)
{
    trace_walk *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->t = t;
    if (!second_cpu() || !(w->ring = calloc(BATCHES, sizeof *w->ring)))
        return w; /* the walk reads t itself */
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->filled, NULL);
    pthread_cond_init(&w->emptied, NULL);
    w->ahead = pthread_create(&w->thread, NULL, reader, w) == 0;
    if (!w->ahead) {
        pthread_mutex_destroy(&w->lock);
        pthread_cond_destroy(&w->filled);
        pthread_cond_destroy(&w->emptied);
    }
    return w;
}

/* Gives ring[walk_at] back to the reader. */
static void give_back(trace_walk *w)
{
    pthread_mutex_lock(&w->lock);
    w->walk_at = (w->walk_at + 1) % BATCHES;
    w->full--;
    w->given++;
    w->taken = 0;
    pthread_cond_signal(&w->emptied);
    pthread_mutex_unlock(&w->lock);
}

int trace_walk_next(trace_walk *w, const memtap_record **recs,
                    uint32_t *tid)
{
    if (!w->ahead) {
        int n = memtap_trace_next_run(w->t, recs, tid, BATCH_RECORDS);
        trace_run_clock(w->t, &w->last.clock);
        return n;
    }
    for (;;) {
        if (!w->taken) {
            pthread_mutex_lock(&w->lock);
            while (!w->full)
                pthread_cond_wait(&w->filled, &w->lock);
            pthread_mutex_unlock(&w->lock);
            w->taken = 1;
            w->run_at = 0;
        }
        batch *b = &w->ring[w->walk_at];
        if (w->run_at < b->nruns) {
            const run_ref *r = &b->runs[w->run_at++];
            w->last = *r;
            *recs = r->recs;
            *tid = r->tid;
            return (int)r->n;
        }
        if (b->end)
            return b->rc; /* kept: later calls say the same */
        give_back(w);
    }
}

int trace_walk_clock(const trace_walk *w, trace_clock *c)
{
    *c = w->last.clock;
    return c->of != 0;
}

void trace_walk_close(trace_walk *w)
{
    if (!w)
        return;
    if (!w->ahead) {
        free(w->ring);
        free(w);
        return;
    }
    pthread_mutex_lock(&w->lock);
    w->stop = 1;
    pthread_cond_signal(&w->emptied);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    trace_keep_end(w->t);
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->filled);
    pthread_cond_destroy(&w->emptied);
    free(w->ring);
    free(w);
}
