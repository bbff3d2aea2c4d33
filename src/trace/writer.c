/*
 * writer.c - the single-threaded .mtr writer used by the memtap command and
 * the tests.  It shares chunk encoding with the in-process tracer.
 */
#include "writer.h"

#include "chunk.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WRITER_RECORDS 4096

struct trace_writer {
    int fd;
    uint32_t tid;
    size_t n;
    memtap_record recs[WRITER_RECORDS];
    ZSTD_CCtx *cctx;
    void *out;
    size_t out_cap;
    uint8_t *packed;           /* WRITER_RECORDS * TRACE_PACKED_MAX */
};

int trace_writer_create(const char *path, uint32_t pid, trace_writer **out)
{
    *out = NULL;
    trace_writer *w = calloc(1, sizeof *w);
    if (!w)
        return MEMTAP_E_NOMEM;
    w->cctx = ZSTD_createCCtx();
    w->out_cap = trace_chunk_bound(MEMTAP_CHUNK_MAX_RAW);
    w->out = malloc(w->out_cap);
    w->packed = malloc((size_t)WRITER_RECORDS * TRACE_PACKED_MAX);
    w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int rc = MEMTAP_OK;
    if (!w->cctx || !w->out || !w->packed)
        rc = MEMTAP_E_NOMEM;
    else if (w->fd < 0)
        rc = MEMTAP_E_IO;
    else if (ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx,
                                                 ZSTD_c_checksumFlag, 1)))
        rc = MEMTAP_E_COMPRESS;
    if (rc == MEMTAP_OK) {
        memtap_file_header h;
        trace_file_header_init(&h, pid, 0, 0, 0);
        if (trace_write_all(w->fd, &h, sizeof h) != 0)
            rc = MEMTAP_E_IO;
    }
    if (rc != MEMTAP_OK) {
        trace_writer_close(w);
        return rc;
    }
    *out = w;
    return MEMTAP_OK;
}

static int write_chunk(trace_writer *w, uint16_t type, uint32_t tid,
                       uint32_t count, const void *raw, size_t len)
{
    if (len > MEMTAP_CHUNK_MAX_RAW)
        return MEMTAP_E_INVALID;
    size_t n = trace_chunk_encode(w->cctx, type, tid, count, raw, len,
                                  w->out, w->out_cap);
    if (n == 0)
        return MEMTAP_E_COMPRESS;
    return trace_write_all(w->fd, w->out, n) == 0 ? MEMTAP_OK : MEMTAP_E_IO;
}

int trace_writer_info(trace_writer *w, const char *text)
{
    return write_chunk(w, MEMTAP_CHUNK_INFO, 0, 0, text, strlen(text));
}

int trace_writer_maps(trace_writer *w, const char *text)
{
    return write_chunk(w, MEMTAP_CHUNK_MAPS, 0, 0, text, strlen(text));
}

int trace_writer_module(trace_writer *w, const memtap_module *m)
{
    size_t plen = strlen(m->path);
    size_t cap = sizeof(memtap_module_entry) + m->nsegs * sizeof *m->segs +
                 plen + 8;
    void *buf = malloc(cap);
    if (!buf)
        return MEMTAP_E_NOMEM;
    size_t n = trace_module_entry_encode(buf, cap, m->id, m->seq, m->base,
                                         (uint8_t)m->flags, m->build_id,
                                         m->build_id_len, m->segs, m->nsegs,
                                         m->path, plen);
    int rc = n ? write_chunk(w, MEMTAP_CHUNK_MODULES, 0, 1, buf, n)
               : MEMTAP_E_INVALID;
    free(buf);
    return rc;
}

/* Writes n records of thread tid as packed chunks of at most
 * WRITER_RECORDS. */
static int write_events(trace_writer *w, uint32_t tid,
                        const memtap_record *recs, size_t n)
{
    for (size_t at = 0; at < n;) {
        size_t k = n - at < WRITER_RECORDS ? n - at : WRITER_RECORDS;
        size_t len = trace_chunk_encode_events(w->cctx, tid, recs + at, k,
                                               w->packed, w->out, w->out_cap);
        if (len == 0)
            return MEMTAP_E_COMPRESS;
        if (trace_write_all(w->fd, w->out, len) != 0)
            return MEMTAP_E_IO;
        at += k;
    }
    return MEMTAP_OK;
}

int trace_writer_flush(trace_writer *w)
{
    if (w->n == 0)
        return MEMTAP_OK;
    int rc = write_events(w, w->tid, w->recs, w->n);
    w->n = 0;
    return rc;
}

int trace_writer_chunk(trace_writer *w, uint32_t tid,
                       const memtap_record *recs, size_t n)
{
    int rc = trace_writer_flush(w);
    if (rc == MEMTAP_OK && n > 0)
        rc = write_chunk(w, MEMTAP_CHUNK_EVENTS, tid, (uint32_t)n, recs,
                         n * sizeof *recs);
    return rc;
}

int trace_writer_event(trace_writer *w, uint32_t tid, const memtap_record *r)
{
    if (w->n > 0 && (w->tid != tid || w->n == WRITER_RECORDS)) {
        int rc = trace_writer_flush(w);
        if (rc)
            return rc;
    }
    w->tid = tid;
    w->recs[w->n++] = *r;
    return MEMTAP_OK;
}

int trace_writer_close(trace_writer *w)
{
    if (!w)
        return MEMTAP_OK;
    int rc = MEMTAP_OK;
    if (w->fd >= 0) {
        rc = trace_writer_flush(w);
        if (close(w->fd) != 0 && rc == MEMTAP_OK)
            rc = MEMTAP_E_IO;
    }
    ZSTD_freeCCtx(w->cctx);
    free(w->out);
    free(w->packed);
    free(w);
    return rc;
}
