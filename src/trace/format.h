/*
 * trace/format.h - the .mtr trace file format (the event model and the
 * reader API are include/memtap/trace.h's): memtap's writers, its reader
 * and its tests use it; users read traces through the reader.
 *
 * Why the format looks as it does
 * -------------------------------
 * Every capture engine (the fault engine, rewritten programs) appends
 * events to a per-thread buffer, packed as they come, and never formats
 * text.
 * When a buffer fills it is compressed into one independent zstd frame and
 * appended to the file with a single write(2) on an O_APPEND descriptor, so
 * threads never take a lock and a file is readable up to its last complete
 * chunk after a crash or kill -9.
 *
 *   file   = file_header chunk*
 *   chunk  = chunk_header payload(stored_size bytes, a zstd frame)
 *
 * Fields that rarely change live in the chunk header, not in each record:
 * the thread id is written once per chunk (as drmemtrace does per run of
 * records).  Records carry a global sequence number so that the reader can
 * merge the threads' chunks back into one program order.
 *
 * Chunk types: PACKED (records as deltas, and runs of the {site, address}
 * pairs rewritten code logs), EVENTS (memtap_record[], format 1), SITES
 * (the per-site facts of a rewritten module, which turn a run's pairs
 * back into records when the trace is read), MODULES (memtap_module_entry
 * followed by its segments and path, repeated), MAPS (the text of
 * /proc/PID/maps when the file was opened) and INFO ("key=value\n" lines:
 * program, arguments, parent trace of a forked child).
 *
 * All integers are little-endian (the only byte order memtap runs on).
 */
#ifndef MEMTAP_TRACE_FORMAT_H
#define MEMTAP_TRACE_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "memtap/trace.h"

#define MEMTAP_CHUNK_MAGIC 0x4b43544du /* "MTCK" */

enum memtap_chunk_type {
    MEMTAP_CHUNK_EVENTS = 1,
    MEMTAP_CHUNK_MODULES = 2,
    MEMTAP_CHUNK_MAPS = 3,
    MEMTAP_CHUNK_INFO = 4,
    /* events packed: per record the kind, then LEB128 varints of the
     * changes from the record before (seq, pc, addr as zig-zag deltas),
     * size, and a byte saying which of flags, addr2, aux, count (when not
     * 1) follow.  count = records, raw_size = packed bytes.  Small
     * deltas make small input for zstd: several times faster to write. */
    MEMTAP_CHUNK_PACKED = 5,
    /* the sites of a rewritten module (memtap_sites_header, then
     * memtap_site[n]): what the access runs of packed chunks refer to */
    MEMTAP_CHUNK_SITES = 6,
    /* rows of one of the trace's tables (memtap_table_header, then the
     * rows as the table lays them out): count = rows */
    MEMTAP_CHUNK_TABLE = 7,
};

/*
 * Tables (format 7 and on).  What a trace knows once for many records
 * (the call stacks heap events name) is a table; its rows come in TABLE
 * chunks, any number of them anywhere in the file, each chunk's rows
 * after its header.  A reader gathers every table when it opens a trace
 * and skips the tables it does not know.
 *
 *   STACKS  row = u32 id  u32 frames  u64 pc[frames]
 *           a call stack, innermost first: pc[0] the call site (a return
 *           address into the caller of the allocating call), then its
 *           callers' return addresses.  A heap event's count names its
 *           stack's id (0: none).  An id may be written more than once,
 *           always with the same frames; two ids may have the same frames.
 */
enum memtap_table_kind {
    MEMTAP_TABLE_STACKS = 1,
};

typedef struct memtap_table_header {
    uint32_t table;         /* enum memtap_table_kind */
    uint32_t rows;
} memtap_table_header;

/* The most frames a STACKS row holds. */
#define MEMTAP_STACK_MAX 64u

/*
 * Access runs (format 3 and on).  Rewritten code logs {site, address}
 * pairs; they stay that small in the file.  Inside a packed chunk, where a
 * record's kind byte would be, a run mark starts a run:
 *
 *   run   = MEMTAP_RUN_MARK_WIDE  u32 entries  u64 first seq  entry*
 *                                          (format 5, what memtap writes)
 *         | MEMTAP_RUN_MARK_NEXT  u32 entries  u64 first seq  entry*
 *                                          (format 4, still read)
 *         | MEMTAP_RUN_MARK  u32 entries  entry*  varint seq
 *                                          (format 3, still read)
 *
 * where site = index | tag << 24 names a memtap_site of a SITES chunk.
 * Two predictors, both starting at 0 in every chunk, keep entries small:
 * the site's slot, (site * 0x9E3779B1) >> 19 in 32-bit arithmetic (8192
 * slots; formats 3 and 4: >> 22, 1024 slots), holds the last address of
 * a site with that slot, and the previous site's slot holds the site that
 * last followed it (collisions only cost bytes: a program of many sites,
 * python3, packed 18 % fewer bytes with 8192 slots, and its trace was 19
 * % smaller).  With d = zigzag(addr - last address of the site's slot):
 *
 *   formats 4 and 5:
 *   entry = varint (d << 1 | 1)           the site that last followed
 *                                         (d < 2^63)
 *         | varint (zigzag(site - that site) << 1)  varint d
 *
 *   format 3:
 *   entry = varint zigzag(site - previous site)  varint d
 *
 * A loop's sites follow each other the same way each time, so most
 * entries are one byte (d < 64).  Each entry stands for the site's load
 * record and then its store record (one or both), all with pc = bias +
 * site pc, the site's size and count, and then for its followers'
 * records (see memtap_site); the run's records take consecutive sequence
 * numbers from the first (format 3: the varint is zigzag(first -
 * previous record's seq)).  Records and runs of a chunk share the
 * previous seq; the record fields pc/addr/aux continue from the last
 * *record*.
 *
 * Order.  Sequence numbers come from one counter in the process, taken
 * once per record, or once per run for all its records (never once per
 * access).  Inside a thread, events are in program order: chunk order,
 * and a thread's logged accesses are packed (and numbered) before its
 * next heap, module or thread event.  Between threads, the numbers order
 * records as they were packed: a heap event, and every run, against
 * everything numbered before it; the accesses inside a run (up to 16384
 * entries, or those since the thread's previous other event) are not
 * ordered access by access against another thread's.  A run is packed
 * when its thread's buffer of logged entries fills, by the thread or by
 * memtap's writer, to which it may offer two full buffers while it logs
 * into a third: a run's number may come up to three buffers (12285
 * entries) of its thread after its accesses, never after that thread's
 * next other event.
 */
#define MEMTAP_RUN_MARK 0x01u
#define MEMTAP_RUN_MARK_NEXT 0x02u
#define MEMTAP_RUN_MARK_WIDE 0x03u
#define MEMTAP_SITE_BITS 24

typedef struct memtap_sites_header {
    uint32_t tag;           /* the module's tag (site >> MEMTAP_SITE_BITS) */
    uint32_t nsites;        /* sites of the module */
    uint32_t first;         /* index of the first site in this chunk */
    uint32_t n;             /* memtap_site entries that follow */
    uint64_t bias;          /* runtime address - link-time address */
    uint64_t reserved;
} memtap_sites_header;

typedef struct memtap_site {
    uint64_t pc;            /* link-time address of the instruction */
    uint32_t count;         /* accesses one record stands for */
    uint16_t size;          /* bytes accessed */
    uint8_t read, write;    /* a load record, a store record, or both */
    int32_t delta;          /* elided: its address minus its leader's */
    uint16_t followers;     /* the elided sites right after this one in
                               the table (at most MEMTAP_FOLLOWERS_MAX) */
    uint8_t elided;         /* never logged itself: its leader is */
    uint8_t due;            /* elided, format 6: 0, or the site (this
                               follower's leader's index + due) after
                               whose entry its records come (0 before) */
} memtap_site;

/* Lossless elision: an access whose address is another's of the same
 * block execution plus a constant (same base and index registers, not
 * written in between, nothing but straight-line code between them) is not
 * logged; its leader's entry stands for it too.  An entry expands to the
 * leader's records, then those of each follower whose due is 0, at the
 * leader's address plus the follower's delta.
 *
 * A follower with due d > 0 (format 6) comes later in program order, after
 * other logged accesses: its records (at the leader's address plus its
 * delta, as any follower's) are due after the records of the next entry
 * naming site L + d of the leader L's module (and L + d's own followers
 * of due 0), after those due there before it, in the order their leaders'
 * entries came.  Sites between the leader and the due site name only that
 * stretch of code, so an entry outside (L, L + d] (another module, the
 * stretch left early: its due access was dropped by MEMTAP_ONLY, or a
 * signal handler's) is preceded by the records still due; so is the end
 * of a run.  A due site in L's own group (d at most its followers, sites
 * no entry names) so puts the follower's records before the next entry's,
 * after those due at L.  memtap packs no run that ends where records are
 * still due but those, and expands at most MEMTAP_DEFERRED_MAX records
 * held so at once. */
#define MEMTAP_FOLLOWERS_MAX 15u
#define MEMTAP_DEFERRED_MAX 32u

typedef struct memtap_chunk_header {
    uint32_t magic;         /* MEMTAP_CHUNK_MAGIC */
    uint16_t type;          /* enum memtap_chunk_type */
    uint16_t reserved;
    uint32_t stored_size;   /* bytes of zstd frame that follow */
    uint32_t raw_size;      /* bytes after decompression */
    uint32_t tid;           /* thread that wrote the chunk */
    uint32_t count;         /* records or entries in the chunk */
    uint32_t checksum;      /* memtap_chunk_header_checksum() of the above */
    uint32_t time;          /* an event chunk's: when its last record was
                               packed (the chunk closed), in microseconds
                               since the trace began, plus one, modulo 2^32
                               (a reader unwraps it in file order); 0: not
                               recorded (traces before this field) */
} memtap_chunk_header;

/* Upper bound on a chunk's decompressed size; larger headers are corrupt. */
#define MEMTAP_CHUNK_MAX_RAW (64u << 20)

/* A module (executable, shared library, vdso) as loaded in the process. */
typedef struct memtap_module_entry {
    uint32_t entry_size;    /* whole entry: this struct, segments, path */
    uint32_t id;
    uint64_t seq;           /* sequence number when it was seen loaded */
    uint64_t base;          /* load bias: runtime address - link address */
    uint16_t nsegs;         /* memtap_segment entries that follow */
    uint16_t path_len;      /* bytes of path that follow, no NUL */
    uint8_t build_id_len;
    uint8_t flags;          /* MEMTAP_MODF_* */
    uint16_t reserved;
    uint8_t build_id[32];
} memtap_module_entry;

/* Checksum of a chunk header's fields before `checksum` (FNV-1a). */
uint32_t memtap_chunk_header_checksum(const memtap_chunk_header *h);

#endif
