/*
 * memtap/trace.h - the one event model and the .mtr trace file format,
 * plus the reader API that the memtap command and the tests use.
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
#ifndef MEMTAP_TRACE_H
#define MEMTAP_TRACE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What the trace library exports (libmemtap-trace.so). */
#ifndef MEMTAP_API
#define MEMTAP_API __attribute__((visibility("default")))
#endif

/* ---- status codes: every library function returns one of these ---- */
typedef enum memtap_status {
    MEMTAP_OK = 0,
    MEMTAP_E_IO = -1,        /* open/read/write failed: see errno */
    MEMTAP_E_NOMEM = -2,     /* allocation failed */
    MEMTAP_E_FORMAT = -3,    /* not a memtap trace (bad magic) */
    MEMTAP_E_VERSION = -4,   /* a trace version this memtap cannot read */
    MEMTAP_E_CORRUPT = -5,   /* a chunk failed validation */
    MEMTAP_E_INVALID = -6,   /* bad argument */
    MEMTAP_E_COMPRESS = -7,  /* zstd failed */
    MEMTAP_E_LIMIT = -8,     /* merging the threads' events would need more
                                memory than MEMTAP_READER_MEMORY allows */
} memtap_status;

/* A short English description of a status code (static storage). */
MEMTAP_API const char *memtap_status_string(int status);

/* ---- event kinds: MadT Table I letters, plus internal kinds ---- */
enum memtap_kind {
    MEMTAP_EV_LOAD = 'L',          /* memory load */
    MEMTAP_EV_STORE = 'S',         /* memory store */
    MEMTAP_EV_COPY = 'Y',          /* block copy: addr=dst, addr2=src */
    MEMTAP_EV_BLOCK_STORE = 'W',   /* memset-like */
    MEMTAP_EV_BLOCK_FETCH = 'G',   /* write()-like */
    MEMTAP_EV_MALLOC = 'M',        /* malloc, new, memalign family */
    MEMTAP_EV_CALLOC = 'C',
    MEMTAP_EV_MMAP = 'P',          /* mmap, and heap growth by brk/sbrk */
    MEMTAP_EV_REALLOC = 'R',       /* addr=new, addr2=old */
    MEMTAP_EV_MREMAP = 'E',        /* addr=new, addr2=old */
    MEMTAP_EV_FREE = 'F',          /* free, delete */
    MEMTAP_EV_MUNMAP = 'U',        /* munmap, and heap shrink by brk/sbrk */
    /* internal kinds (not in MadT's Table I) */
    MEMTAP_EV_MODULE_LOAD = 'o',   /* aux = module id */
    MEMTAP_EV_MODULE_UNLOAD = 'u', /* aux = module id */
    MEMTAP_EV_THREAD_START = 't',
    MEMTAP_EV_THREAD_EXIT = 'x',
    MEMTAP_EV_START = 'b',         /* memtap_start(): traced window begins */
    MEMTAP_EV_STOP = 'e',          /* memtap_stop(): traced window ends */
    MEMTAP_EV_FORK = 'k',          /* aux = child pid */
    MEMTAP_EV_EXEC = 'v',          /* the process is about to exec */
    /* summaries written by shadow-memory tools (memtap heat|share|uninit) */
    MEMTAP_EV_HEAT = 'h',          /* addr=chunk, size=chunk bytes,
                                      aux=accesses */
    MEMTAP_EV_SHARE = 'w',         /* addr=word, size=4, aux=bits of the
                                      threads that accessed it, and of those
                                      that wrote it << 32 */
    MEMTAP_EV_SHADOW_THREAD = 'n', /* aux=the thread's index (bit aux%32 in
                                      share records) */
    MEMTAP_EV_UNINIT = 'i',        /* pc=instruction, addr=first
                                      uninitialized byte, addr2=start of the
                                      read, size=its length, aux=bytes */
    MEMTAP_EV_UNINIT_TOTAL = 'j',  /* pc=instruction, aux=its uninitialized
                                      reads in the whole run */
    /* written at the end by files rewritten with `instrument --profile` */
    MEMTAP_EV_BLOCK_COUNT = 'c',   /* pc=block start, addr=its link-time
                                      address, addr2=the original file's
                                      identity, aux=executions */
};

/* Record flags: how an allocation was made, beyond its Table I kind. */
enum memtap_record_flag {
    MEMTAP_RF_NEW = 1u << 0,       /* C++ operator new / delete */
    MEMTAP_RF_ARRAY = 1u << 1,     /* new[] / delete[] */
    MEMTAP_RF_ALIGNED = 1u << 2,   /* memalign family, aligned new */
    MEMTAP_RF_BRK = 1u << 3,       /* brk/sbrk heap growth or shrink */
    MEMTAP_RF_FAILED = 1u << 4,    /* the call returned failure */
};

/*
 * One event, 56 bytes on disk.  Meaning of the fields by kind:
 *   L S        pc=instruction, addr, size, count=accesses it stands for
 *   Y W G      pc=call site, addr (dst for Y), addr2 (src for Y), size
 *   M C P      pc=call site, addr=block, size, aux=allocation number
 *   R E        pc=call site, addr=new block, addr2=old block, size, aux
 *   F U        pc=call site, addr=block (size for U)
 *   o u        aux=module id;  k  aux=child pid
 */
typedef struct memtap_record {
    uint64_t seq;      /* global order of events in the process */
    uint64_t pc;
    uint64_t addr;
    uint64_t size;
    uint64_t addr2;
    uint64_t aux;
    uint8_t kind;      /* enum memtap_kind */
    uint8_t flags;     /* enum memtap_record_flag */
    uint16_t reserved;
    uint32_t count;
} memtap_record;

#define MEMTAP_TRACE_MAGIC "MEMTAPTR"
#define MEMTAP_TRACE_VERSION 6u   /* 2: events as MEMTAP_CHUNK_PACKED;
                                     3: with access runs and SITES;
                                     4: runs predict the next site;
                                     5: from 8192 slots, not 1024;
                                     6: followers due after a later
                                        entry (memtap_site.due) */
#define MEMTAP_TRACE_VERSION_MIN 1u /* the oldest this reader reads */
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
};

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

typedef struct memtap_file_header {
    char magic[8];          /* MEMTAP_TRACE_MAGIC */
    uint32_t version;       /* MEMTAP_TRACE_VERSION */
    uint32_t header_size;   /* sizeof(memtap_file_header) */
    uint32_t record_size;   /* sizeof(memtap_record) */
    uint32_t pid;
    uint32_t ppid;
    uint32_t reserved;
    uint64_t start_ns;      /* CLOCK_REALTIME when the file was opened */
    uint64_t first_seq;     /* sequence number when the file was opened */
} memtap_file_header;

typedef struct memtap_chunk_header {
    uint32_t magic;         /* MEMTAP_CHUNK_MAGIC */
    uint16_t type;          /* enum memtap_chunk_type */
    uint16_t reserved;
    uint32_t stored_size;   /* bytes of zstd frame that follow */
    uint32_t raw_size;      /* bytes after decompression */
    uint32_t tid;           /* thread that wrote the chunk */
    uint32_t count;         /* records or entries in the chunk */
    uint32_t checksum;      /* memtap_chunk_header_checksum() of the above */
    uint32_t reserved2;
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

enum memtap_module_flag {
    MEMTAP_MODF_MAIN = 1u << 0,   /* the program itself */
    MEMTAP_MODF_VDSO = 1u << 1,
    MEMTAP_MODF_REWRITTEN = 1u << 2, /* a copy memtap rewrote: its code
                                        logs its own accesses */
};

typedef struct memtap_segment {
    uint64_t vaddr;         /* link-time address (add base for runtime) */
    uint64_t memsz;
    uint32_t prot;          /* PF_R | PF_W | PF_X */
    uint32_t reserved;
} memtap_segment;

/* Checksum of a chunk header's fields before `checksum` (FNV-1a). */
MEMTAP_API uint32_t memtap_chunk_header_checksum(const memtap_chunk_header *h);

/* ---- reader ---- */

typedef struct memtap_trace memtap_trace;

/* An event as the reader returns it: the record plus its chunk's thread. */
typedef struct memtap_event {
    memtap_record rec;
    uint32_t tid;
} memtap_event;

/* A module as the reader returns it (strings owned by the trace). */
typedef struct memtap_module {
    uint32_t id;
    uint32_t flags;
    uint64_t seq;
    uint64_t base;
    const char *path;
    const uint8_t *build_id;
    size_t build_id_len;
    const memtap_segment *segs;
    size_t nsegs;
} memtap_module;

/* What the reader noticed about the file while opening it. */
typedef struct memtap_trace_health {
    uint64_t chunks;           /* valid chunks */
    uint64_t events;           /* records in valid event chunks */
    uint64_t corrupt_chunks;   /* chunks skipped as corrupt */
    uint64_t skipped_bytes;    /* bytes skipped to resynchronize */
    int truncated;             /* the file ends inside a chunk */
    uint64_t duplicates;       /* records read twice (a chunk written twice,
                                  or out of its thread's order), dropped;
                                  known once they have been walked past */
} memtap_trace_health;

/*
 * Opens a trace file.  Scans the chunk headers (without decompressing event
 * chunks), loads modules, maps and info, and prepares a merged walk over the
 * threads' events in sequence order (nothing is decompressed before the
 * first memtap_trace_next).  The walk holds one decompressed chunk per
 * thread; their total is bounded by MEMTAP_READER_MEMORY (MiB, default
 * 4096), beyond which memtap_trace_next returns MEMTAP_E_LIMIT.  On success *out owns the file; free it
 * with memtap_trace_close().  A truncated or partly corrupt file opens
 * successfully: see memtap_trace_get_health().
 */
MEMTAP_API int memtap_trace_open(const char *path, memtap_trace **out);
/* The same for an open descriptor (a memfd, a pipe's spool): the trace
 * reads through its own duplicate, the caller keeps fd. */
MEMTAP_API int memtap_trace_open_fd(int fd, memtap_trace **out);
MEMTAP_API void memtap_trace_close(memtap_trace *t);

MEMTAP_API const memtap_file_header *memtap_trace_header(const memtap_trace *t);
MEMTAP_API const memtap_trace_health *memtap_trace_get_health(const memtap_trace *t);
MEMTAP_API size_t memtap_trace_module_count(const memtap_trace *t);
MEMTAP_API const memtap_module *memtap_trace_module_at(const memtap_trace *t, size_t i);
/* The /proc/PID/maps snapshot ("" when absent). */
MEMTAP_API const char *memtap_trace_maps(const memtap_trace *t);
/* The value of an INFO key (its last occurrence; it runs to the next
 * newline), or NULL. */
MEMTAP_API const char *memtap_trace_info(const memtap_trace *t, const char *key);

/*
 * Next event in sequence order.  Returns 1 and fills *ev, 0 at the end, or a
 * negative status (a chunk that validated by header but fails to decompress
 * is counted as corrupt and skipped, not returned as an error).
 */
MEMTAP_API int memtap_trace_next(memtap_trace *t, memtap_event *ev);

/*
 * The next events as a run of one thread's records, without copying them:
 * *recs points at up to max records in order (valid until the next call on
 * t), all of thread *tid.  Returns how many (at most INT_MAX), 0 at the
 * end, or a negative status.  Runs and memtap_trace_next may be mixed.
 */
MEMTAP_API int memtap_trace_next_run(memtap_trace *t,
                                     const memtap_record **recs,
                                     uint32_t *tid, size_t max);

/* Restart the walk at the first event. */
MEMTAP_API int memtap_trace_rewind(memtap_trace *t);

#ifdef __cplusplus
}
#endif
#endif
