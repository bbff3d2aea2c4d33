/*
 * read_ahead.c - a trace's events read on a second CPU while the command
 * prints them on the first: a thread takes runs of records from the
 * reader (decompressing and expanding the packed chunks: a quarter of
 * `memtap show --raw`) into a ring of batches the walk takes them from.
 * With one CPU the walk reads the trace itself.
 */
#define _GNU_SOURCE
#include "cli.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#define BATCHES 3
#define BATCH_RECORDS 16384u

typedef struct run_ref {
    uint32_t first, n, tid;
} run_ref;

typedef struct batch {
    memtap_record recs[BATCH_RECORDS];
    run_ref runs[BATCH_RECORDS];
    uint32_t nrecs, nruns;
    int end;                 /* the walk's last batch: rc says how it ended */
    int rc;
} batch;

struct read_ahead {
    memtap_trace *t;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t filled, emptied;
    batch *ring;             /* BATCHES of them, used in turn */
    unsigned full;           /* batches filled and not yet walked */
    unsigned fill_at, walk_at;
    uint32_t run_at;         /* the walk's next run in ring[walk_at] */
    int taken;               /* the walk holds ring[walk_at] */
    int stop;                /* the walk ended early */
};

/* Fills one batch with runs from the reader; whether the walk ended. */
static int fill(memtap_trace *t, batch *b)
{
    b->nrecs = b->nruns = 0;
    b->end = 0;
    while (b->nrecs < BATCH_RECORDS) {
        const memtap_record *recs;
        uint32_t tid;
        int rc = memtap_trace_next_run(t, &recs, &tid,
                                       BATCH_RECORDS - b->nrecs);
        if (rc <= 0) {
            b->end = 1;
            b->rc = rc;
            return 1;
        }
        memcpy(&b->recs[b->nrecs], recs, (size_t)rc * sizeof *recs);
        b->runs[b->nruns++] = (run_ref){ b->nrecs, (uint32_t)rc, tid };
        b->nrecs += (uint32_t)rc;
    }
    return 0;
}

static void *reader(void *arg)
{
    read_ahead *ra = arg;
    for (int end = 0; !end;) {
        pthread_mutex_lock(&ra->lock);
        while (ra->full == BATCHES && !ra->stop)
            pthread_cond_wait(&ra->emptied, &ra->lock);
        int stop = ra->stop;
        pthread_mutex_unlock(&ra->lock);
        if (stop)
            break;
        end = fill(ra->t, &ra->ring[ra->fill_at]);
        pthread_mutex_lock(&ra->lock);
        ra->fill_at = (ra->fill_at + 1) % BATCHES;
        ra->full++;
        pthread_cond_signal(&ra->filled);
        pthread_mutex_unlock(&ra->lock);
    }
    return NULL;
}

/* Whether this process may run on more than one CPU. */
static int second_cpu(void)
{
    cpu_set_t set;
    return sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 1;
}

read_ahead *read_ahead_start(memtap_trace *t)
{
    if (!second_cpu())
        return NULL;
    read_ahead *ra = calloc(1, sizeof *ra);
    batch *ring = ra ? calloc(BATCHES, sizeof *ring) : NULL;
    if (!ring) {
        free(ra);
        return NULL;
    }
    ra->t = t;
    ra->ring = ring;
    pthread_mutex_init(&ra->lock, NULL);
    pthread_cond_init(&ra->filled, NULL);
    pthread_cond_init(&ra->emptied, NULL);
    if (pthread_create(&ra->thread, NULL, reader, ra) != 0) {
        pthread_mutex_destroy(&ra->lock);
        pthread_cond_destroy(&ra->filled);
        pthread_cond_destroy(&ra->emptied);
        free(ring);
        free(ra);
        return NULL;
    }
    return ra;
}

/* Gives ring[walk_at] back to the reader. */
static void give_back(read_ahead *ra)
{
    pthread_mutex_lock(&ra->lock);
    ra->walk_at = (ra->walk_at + 1) % BATCHES;
    ra->full--;
    ra->taken = 0;
    pthread_cond_signal(&ra->emptied);
    pthread_mutex_unlock(&ra->lock);
}

int read_ahead_next(read_ahead *ra, const memtap_record **recs,
                    uint32_t *tid)
{
    for (;;) {
        if (!ra->taken) {
            pthread_mutex_lock(&ra->lock);
            while (!ra->full)
                pthread_cond_wait(&ra->filled, &ra->lock);
            pthread_mutex_unlock(&ra->lock);
            ra->taken = 1;
            ra->run_at = 0;
        }
        batch *b = &ra->ring[ra->walk_at];
        if (ra->run_at < b->nruns) {
            const run_ref *r = &b->runs[ra->run_at++];
            *recs = &b->recs[r->first];
            *tid = r->tid;
            return (int)r->n;
        }
        if (b->end)
            return b->rc; /* kept: later calls say the same */
        give_back(ra);
    }
}

void read_ahead_stop(read_ahead *ra)
{
    if (!ra)
        return;
    pthread_mutex_lock(&ra->lock);
    ra->stop = 1;
    pthread_cond_signal(&ra->emptied);
    pthread_mutex_unlock(&ra->lock);
    pthread_join(ra->thread, NULL);
    pthread_mutex_destroy(&ra->lock);
    pthread_cond_destroy(&ra->filled);
    pthread_cond_destroy(&ra->emptied);
    free(ra->ring);
    free(ra);
}

int read_ahead_or_read(read_ahead *ra, memtap_trace *t,
                       const memtap_record **recs, uint32_t *tid)
{
    return ra ? read_ahead_next(ra, recs, tid)
              : memtap_trace_next_run(t, recs, tid, BATCH_RECORDS);
}
