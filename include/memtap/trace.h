/*
 * memtap/trace.h - the one event model (kinds, flags, the record) and the
 * reader API of .mtr traces, which the memtap command, the tests and
 * users' programs (libmemtap-trace.so) read them with.  How the file is
 * encoded (chunks, packing, access runs) is memtap's own business:
 * src/trace/format.h.
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
 *   M C P R E F U  count=the call stack (memtap_heap_stack)
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

/* ---- what a record is: the table above, written once ---- */

/* Data accessed: L S (one access each), Y (a copy: addr2 read, addr
 * written), W G (a block stored, fetched). */
static inline int memtap_kind_is_access(int kind)
{
    return kind == MEMTAP_EV_LOAD || kind == MEMTAP_EV_STORE ||
           kind == MEMTAP_EV_COPY || kind == MEMTAP_EV_BLOCK_STORE ||
           kind == MEMTAP_EV_BLOCK_FETCH;
}

/* M C P R E: a block made. */
static inline int memtap_kind_is_alloc(int kind)
{
    return kind == MEMTAP_EV_MALLOC || kind == MEMTAP_EV_CALLOC ||
           kind == MEMTAP_EV_MMAP || kind == MEMTAP_EV_REALLOC ||
           kind == MEMTAP_EV_MREMAP;
}

/* The heap changes: M C P R E (a block made), F U (released). */
static inline int memtap_kind_is_heap(int kind)
{
    return memtap_kind_is_alloc(kind) || kind == MEMTAP_EV_FREE ||
           kind == MEMTAP_EV_MUNMAP;
}

/* M C P R E: the block made (0 when the call failed) and its allocation
 * number, counted from 0 in the process. */
static inline uint64_t memtap_alloc_block(const memtap_record *r) { return r->addr; }
static inline uint64_t memtap_alloc_number(const memtap_record *r) { return r->aux; }
/* R E: the block the new one replaced (0: none). */
static inline uint64_t memtap_alloc_replaced(const memtap_record *r) { return r->addr2; }
/* M C P R E F U: the id of the call stack the event was made from
 * (memtap_trace_stack); 0, or an id the trace has no stack for, when it
 * was not taken. */
static inline uint32_t memtap_heap_stack(const memtap_record *r) { return r->count; }
/* Y: the bytes copied from (addr: to). */
static inline uint64_t memtap_copy_source(const memtap_record *r) { return r->addr2; }
/* o u: the module; k: the child's pid. */
static inline uint32_t memtap_module_id(const memtap_record *r) { return (uint32_t)r->aux; }
static inline uint32_t memtap_child_pid(const memtap_record *r) { return (uint32_t)r->aux; }

#define MEMTAP_TRACE_MAGIC "MEMTAPTR"
#define MEMTAP_TRACE_VERSION 7u   /* 2: events as MEMTAP_CHUNK_PACKED;
                                     3: with access runs and SITES;
                                     4: runs predict the next site;
                                     5: from 8192 slots, not 1024;
                                     6: followers due after a later
                                        entry (memtap_site.due);
                                     7: heap events name call stacks
                                        (TABLE chunks) */
#define MEMTAP_TRACE_VERSION_MIN 1u /* the oldest this reader reads */

/* The file's header, as memtap_trace_header gives it. */
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

/* A loaded segment of a module (program header PT_LOAD). */
typedef struct memtap_segment {
    uint64_t vaddr;         /* link-time address (add base for runtime) */
    uint64_t memsz;
    uint32_t prot;          /* PF_R | PF_W | PF_X */
    uint32_t reserved;
} memtap_segment;

/* ---- reader ---- */

typedef struct memtap_trace memtap_trace;

/* An event as the reader returns it: the record plus its chunk's thread. */
typedef struct memtap_event {
    memtap_record rec;
    uint32_t tid;
} memtap_event;

/* memtap_module.flags. */
enum memtap_module_flag {
    MEMTAP_MODF_MAIN = 1u << 0,   /* the program itself */
    MEMTAP_MODF_VDSO = 1u << 1,
    MEMTAP_MODF_REWRITTEN = 1u << 2, /* a copy memtap rewrote: its code
                                        logs its own accesses */
};

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
/* The value of an INFO key (its last occurrence, without its newline),
 * or NULL; valid until the trace is closed. */
MEMTAP_API const char *memtap_trace_info(const memtap_trace *t, const char *key);

/* The frames of call stack id (memtap_heap_stack): return addresses as
 * the process ran, innermost first (frames[0] is the event's call site).
 * Returns 1 with *frames (valid until the trace is closed) and *n, 0 when
 * the trace has no stack of that id. */
MEMTAP_API int memtap_trace_stack(const memtap_trace *t, uint32_t id,
                                  const uint64_t **frames, size_t *n);

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

/*
 * When the first and the last record of the run memtap_trace_next_run
 * returned last were made, in microseconds since the trace began.  A
 * chunk says when it closed; its records are spread evenly over the time
 * from when its thread's chunk before it closed (for a thread's first
 * chunk, the file's chunk before it) to then, the last at its close.
 * Returns 1, or 0 when the trace holds no times (written before memtap
 * recorded them).
 */
MEMTAP_API int memtap_trace_run_time(const memtap_trace *t, uint64_t *first_us,
                                     uint64_t *last_us);

/* How long the trace's events took: the time its last chunk closed, in
 * microseconds since it began; 0 when it holds no times. */
MEMTAP_API uint64_t memtap_trace_duration_us(const memtap_trace *t);

/* Restart the walk at the first event. */
MEMTAP_API int memtap_trace_rewind(memtap_trace *t);

#ifdef __cplusplus
}
#endif
#endif
