/*
 * chunk.c - chunk encoding and the header checksum shared by writers and
 * the reader.  Safe inside traced processes: no allocation, no stdio.
 */
#include "chunk.h"
#include "trace/format.h"
#include "sys/hash.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

uint32_t memtap_chunk_header_checksum(const memtap_chunk_header *h)
{
    return fnv1a32(FNV32_OFFSET, h, offsetof(memtap_chunk_header, checksum));
}

static int level_of(trace_compression c)
{
    return c == TRACE_SMALL ? 3 : 1;
}

size_t trace_chunk_workspace_size(size_t raw_max, trace_compression c)
{
    /* zstd picks its tables by the size of each input, from tiers that
     * end at 16 KiB, 128 KiB and 256 KiB; a smaller input may need more
     * than a larger one, so take the most any size up to raw_max needs */
    static const size_t tier_ends[] = { 16u << 10, 128u << 10, 256u << 10 };
    size_t most = 0;
    for (size_t i = 0; i <= sizeof tier_ends / sizeof *tier_ends; i++) {
        size_t src = i < 3 && tier_ends[i] < raw_max ? tier_ends[i] : raw_max;
        ZSTD_compressionParameters cp =
            ZSTD_getCParams(level_of(c), src, 0);
        size_t need = ZSTD_estimateCCtxSize_usingCParams(cp);
        most = need > most ? need : most;
    }
    return most;
}

/* Sets cctx's level and literals' mode; 0, or -1. */
static int set_mode(ZSTD_CCtx *cctx, int level, int raw_literals)
{
    return ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel,
                                               level)) ||
                   ZSTD_isError(ZSTD_CCtx_setParameter(
                       cctx, ZSTD_c_literalCompressionMode,
                       raw_literals ? ZSTD_ps_disable : ZSTD_ps_auto))
               ? -1
               : 0;
}

ZSTD_CCtx *trace_chunk_context(void *workspace, size_t size,
                               trace_compression c)
{
    ZSTD_CCtx *cctx = ZSTD_initStaticCCtx(workspace, size);
    if (!cctx || set_mode(cctx, level_of(c), c == TRACE_FAST) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1)))
        return NULL;
    return cctx;
}

size_t trace_chunk_bound(size_t raw_size)
{
    return sizeof(memtap_chunk_header) + ZSTD_compressBound(raw_size);
}

/* At level 1, a hash table of a quarter the entries level 1 picks for
 * the input's size: for a chunk of access runs (30-45 KB) 2^11, not 2^13,
 * which compressed the packed streams of python3's run 23 % faster, a
 * third as large 2.8 %, the walk's 15 % faster and its set-up's 18 %, none
 * larger; for one of records (150 KB) 2^12, not 2^14, 2 % slower and 2 %
 * larger, where 2^11 was 6 % slower and 15 % larger (a harness of
 * ZSTD_compress2 on the chunks of their traces). */
static void fit_hash(ZSTD_CCtx *cctx, size_t raw_size)
{
    int level = 0;
    if (!ZSTD_isError(ZSTD_CCtx_getParameter(cctx, ZSTD_c_compressionLevel,
                                             &level)) &&
        level == 1)
        ZSTD_CCtx_setParameter(
            cctx, ZSTD_c_hashLog,
            (int)ZSTD_getCParams(1, raw_size, 0).hashLog - 2);
}

size_t trace_chunk_encode(ZSTD_CCtx *cctx, uint16_t type, uint32_t tid,
                          uint32_t count, const void *raw, size_t raw_size,
                          void *out, size_t out_cap)
{
    memtap_chunk_header h;
    if (out_cap < sizeof h || raw_size > MEMTAP_CHUNK_MAX_RAW)
        return 0;
    fit_hash(cctx, raw_size);
    size_t z = ZSTD_compress2(cctx, (char *)out + sizeof h,
                              out_cap - sizeof h, raw, raw_size);
    if (ZSTD_isError(z))
        return 0;
    memset(&h, 0, sizeof h);
    h.magic = MEMTAP_CHUNK_MAGIC;
    h.type = type;
    h.stored_size = (uint32_t)z;
    h.raw_size = (uint32_t)raw_size;
    h.tid = tid;
    h.count = count;
    h.checksum = memtap_chunk_header_checksum(&h);
    memcpy(out, &h, sizeof h);
    return sizeof h + z;
}

/* The chunks of a thread stored as they are before one is compressed
 * again to see whether its events shrink 2:1 again. */
#define STORED_RUN 16

/* Whether a chunk is stored as it is, its thread's state `stored`. */
static int stores(trace_compression c, uint8_t stored)
{
    return c != TRACE_SMALL && stored && stored != STORED_RUN;
}

int trace_stream_stores(trace_compression c, const trace_stream *st)
{
    return stores(c, atomic_load_explicit(st, memory_order_relaxed));
}

size_t trace_chunk_encode_stream(ZSTD_CCtx *cctx, trace_compression c,
                                 trace_stream *st, uint16_t type,
                                 uint32_t tid, uint32_t count, const void *raw,
                                 size_t raw_size, void *out, size_t out_cap)
{
    uint8_t stored = atomic_load_explicit(st, memory_order_relaxed);
    if (!stores(c, stored)) {
        size_t n = trace_chunk_encode(cctx, type, tid, count, raw, raw_size,
                                      out, out_cap);
        if (n && c != TRACE_SMALL)
            atomic_store_explicit(
                st, raw_size < 2 * (n - sizeof(memtap_chunk_header)),
                memory_order_relaxed);
        return n;
    }
    /* zstd's least effort: raw blocks in a checksummed frame, read as any */
    if (set_mode(cctx, ZSTD_minCLevel(), 1))
        return 0;
    size_t n = trace_chunk_encode(cctx, type, tid, count, raw, raw_size, out,
                                  out_cap);
    if (set_mode(cctx, level_of(c), c == TRACE_FAST)) /* as it was */
        return 0;
    atomic_store_explicit(st, stored + 1, memory_order_relaxed);
    return n;
}

void trace_chunk_set_time(void *out, uint32_t time)
{
    memcpy((char *)out + offsetof(memtap_chunk_header, time), &time, sizeof time);
}

size_t trace_chunk_encode_sites(ZSTD_CCtx *cctx, uint32_t tid,
                                const memtap_sites_header *h,
                                const void *frame, size_t frame_len,
                                void *out, size_t out_cap)
{
    if ((uint64_t)h->n * sizeof(memtap_site) >
        MEMTAP_CHUNK_MAX_RAW - sizeof *h)
        return 0;
    size_t len = trace_chunk_encode(cctx, MEMTAP_CHUNK_SITES, tid, h->n, h,
                                    sizeof *h, out, out_cap);
    if (len == 0 || out_cap - len < frame_len)
        return 0;
    memcpy((char *)out + len, frame, frame_len);
    memtap_chunk_header c;
    memcpy(&c, out, sizeof c);
    c.stored_size += (uint32_t)frame_len;
    c.raw_size += h->n * (uint32_t)sizeof(memtap_site);
    c.checksum = memtap_chunk_header_checksum(&c);
    memcpy(out, &c, sizeof c);
    return len + frame_len;
}

size_t trace_chunk_encode_events(ZSTD_CCtx *cctx, uint32_t tid,
                                 const memtap_record *r, size_t n,
                                 uint8_t *scratch, void *out, size_t out_cap)
{
    if (n > MEMTAP_CHUNK_MAX_RAW / sizeof *r)
        return 0;
    size_t len = trace_events_pack(r, n, scratch);
    return trace_chunk_encode(cctx, MEMTAP_CHUNK_PACKED, tid, (uint32_t)n,
                              scratch, len, out, out_cap);
}

int trace_write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

void trace_file_header_init(memtap_file_header *h, uint32_t pid,
                            uint32_t ppid, uint64_t start_ns,
                            uint64_t first_seq)
{
    memset(h, 0, sizeof *h);
    memcpy(h->magic, MEMTAP_TRACE_MAGIC, sizeof h->magic);
    h->version = MEMTAP_TRACE_VERSION;
    h->header_size = sizeof *h;
    h->record_size = sizeof(memtap_record);
    h->pid = pid;
    h->ppid = ppid;
    h->start_ns = start_ns;
    h->first_seq = first_seq;
}

size_t trace_module_entry_encode(void *out, size_t out_cap, uint32_t id,
                                 uint64_t seq, uint64_t base, uint8_t flags,
                                 const uint8_t *build_id, size_t build_id_len,
                                 const memtap_segment *segs, size_t nsegs,
                                 const char *path, size_t path_len)
{
    memtap_module_entry e;
    if (build_id_len > sizeof e.build_id)
        build_id_len = sizeof e.build_id;
    if (nsegs > UINT16_MAX || path_len > UINT16_MAX)
        return 0;
    size_t total = sizeof e + nsegs * sizeof *segs + path_len;
    total = (total + 7) & ~(size_t)7;
    if (total > out_cap)
        return 0;
    memset(&e, 0, sizeof e);
    e.entry_size = (uint32_t)total;
    e.id = id;
    e.seq = seq;
    e.base = base;
    e.nsegs = (uint16_t)nsegs;
    e.path_len = (uint16_t)path_len;
    e.build_id_len = (uint8_t)build_id_len;
    e.flags = flags;
    if (build_id_len)
        memcpy(e.build_id, build_id, build_id_len);
    char *p = out;
    memcpy(p, &e, sizeof e);
    p += sizeof e;
    if (nsegs) {
        memcpy(p, segs, nsegs * sizeof *segs);
        p += nsegs * sizeof *segs;
    }
    memcpy(p, path, path_len);
    memset(p + path_len, 0, total - (size_t)(p + path_len - (char *)out));
    return total;
}
