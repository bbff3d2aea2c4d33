/*
 * chunk.h - encoding one trace chunk (header + zstd frame) into a caller's
 * buffer.  Used by the in-process tracer, so it never allocates: the zstd
 * context lives in a workspace the caller provides.
 */
#ifndef MEMTAP_TRACE_CHUNK_H
#define MEMTAP_TRACE_CHUNK_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include "memtap/trace.h"
#include "trace/format.h"
#include "trace/pack.h"

/* How chunks are compressed (memtap run --compress): zstd level 1
 * (balanced, the default: fast, and regular accesses compress very well;
 * event chunks stored as trace_stream says); the same with literals
 * never Huffman-coded (fast); level 3, every chunk (small). */
typedef enum trace_compression {
    TRACE_BALANCED = 0,
    TRACE_FAST = 1,
    TRACE_SMALL = 2,
} trace_compression;

/* Bytes of workspace a compression context for chunks of raw_max needs. */
size_t trace_chunk_workspace_size(size_t raw_max, trace_compression c);

/* Builds a compression context inside workspace; NULL if it is too small. */
ZSTD_CCtx *trace_chunk_context(void *workspace, size_t size,
                               trace_compression c);

/* Bytes of output buffer that encoding raw_size bytes may need. */
size_t trace_chunk_bound(size_t raw_size);

/*
 * Encodes one chunk (header then compressed payload) into out.  Returns the
 * number of bytes written to out, or 0 if compression failed.
 */
size_t trace_chunk_encode(ZSTD_CCtx *cctx, uint16_t type, uint32_t tid,
                          uint32_t count, const void *raw, size_t raw_size,
                          void *out, size_t out_cap);

/* How a thread's event chunks are stored, under TRACE_BALANCED and
 * TRACE_FAST: compressed while they shrink at least 2:1; after one that
 * did not, stored as they are (zstd's raw blocks: irregular addresses, a
 * compressor's hash chains or a random walk, leave zstd little to match,
 * and compressing them costs about what packing them does: gzip -9's
 * chunks 3.1 ns a record for 1.5:1, stored 0.4), the 16th compressed
 * again to see whether they shrink again.  0 (compressed) to begin
 * with, else the chunks since one was compressed. */
typedef _Atomic uint8_t trace_stream;

/* trace_chunk_encode of an event chunk of a thread whose chunks' state
 * is *st, updated here (compressed as c says). */
size_t trace_chunk_encode_stream(ZSTD_CCtx *cctx, trace_compression c,
                                 trace_stream *st, uint16_t type,
                                 uint32_t tid, uint32_t count, const void *raw,
                                 size_t raw_size, void *out, size_t out_cap);

/* Whether trace_chunk_encode_stream would store the next chunk as it is
 * (a copy and a checksum: cheapest where its bytes are in the cache). */
int trace_stream_stores(trace_compression c, const trace_stream *st);

/* Sets the time field of the chunk header at the start of out (a chunk
 * encoded above; the field is outside the header's checksum). */
void trace_chunk_set_time(void *out, uint32_t time);

/* Packs n records and encodes them as one MEMTAP_CHUNK_PACKED chunk of
 * thread tid into out, with scratch (n * TRACE_PACKED_MAX bytes) for the
 * packed bytes.  Returns the chunk's length, or 0. */
size_t trace_chunk_encode_events(ZSTD_CCtx *cctx, uint32_t tid,
                                 const memtap_record *r, size_t n,
                                 uint8_t *scratch, void *out, size_t out_cap);

/* Encodes one SITES chunk from h and `frame`, a zstd frame of the h->n
 * sites that follow h (made once, when the module was rewritten): h is
 * compressed here into a frame of its own, and the two frames, one after
 * the other, decompress to the chunk's bytes.  Returns the chunk's length,
 * or 0. */
size_t trace_chunk_encode_sites(ZSTD_CCtx *cctx, uint32_t tid,
                                const memtap_sites_header *h,
                                const void *frame, size_t frame_len,
                                void *out, size_t out_cap);

/* Writes all of buf to fd, retrying on EINTR; 0 on success, -1 on error. */
int trace_write_all(int fd, const void *buf, size_t len);

/* Fills a file header for the calling process. */
void trace_file_header_init(memtap_file_header *h, uint32_t pid,
                            uint32_t ppid, uint64_t start_ns,
                            uint64_t first_seq);

#endif

/*
 * Serializes one module entry (memtap_module_entry, segments, path) into
 * out.  Returns its size, or 0 if it does not fit in out_cap.
 */
size_t trace_module_entry_encode(void *out, size_t out_cap, uint32_t id,
                                 uint64_t seq, uint64_t base, uint8_t flags,
                                 const uint8_t *build_id, size_t build_id_len,
                                 const memtap_segment *segs, size_t nsegs,
                                 const char *path, size_t path_len);
