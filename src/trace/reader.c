/*
 * reader.c - reads .mtr trace files: validates the file header, indexes the
 * chunks (resynchronizing past corrupt bytes, stopping cleanly at a
 * truncated tail), loads modules, maps and info, and merges the threads'
 * event chunks back into sequence order, one decompressed chunk per thread
 * at a time so that traces of any size stream; or follows a trace still
 * being written (trace/follow.h), its chunks in file order.
 *
 * One file: the chunk index, the tables and the merge share the open
 * trace's state.
 */
#define _GNU_SOURCE
#include "memtap/trace.h"
#include "sys/env.h"
#include "sys/hash.h"
#include "trace/chunk.h"
#include "trace/follow.h"
#include "trace/tool.h"
#include "trace/walk.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <zstd.h>

/* The most module, maps and info chunks may hold in all (a trace of a
 * program that loaded thousands of libraries holds a few MiB). */
#define META_BUDGET (256ull << 20)

typedef struct chunk_ref {
    uint64_t payload;   /* file offset of the zstd frame */
    uint32_t stored;
    uint32_t raw;
    uint32_t tid;
    uint32_t count;     /* records */
    uint16_t type;      /* MEMTAP_CHUNK_EVENTS, _PACKED or _SITES */
    uint64_t time;      /* an event chunk's, unwrapped: microseconds since
                           the trace began + 1; 0: not recorded */
} chunk_ref;

typedef struct cursor {
    uint32_t tid;
    size_t *chunks;     /* indices into the trace's event chunk refs */
    size_t nchunks, cap, next;
    memtap_record *recs;
    size_t nrecs, pos, recs_cap;
    int ordered;        /* recs' sequence numbers rise from each to the next */
    uint64_t from, to;  /* the time of recs' chunk (memtap_trace_run_time):
                           microseconds + 1, 0 when not recorded */
    uint64_t last_seq;  /* of the record this cursor returned last */
    int returned;       /* whether it returned one since the rewind */
} cursor;

/* A record buffer a cursor left while the walk may still hold records
 * it lent from it (trace_keep_stamp). */
typedef struct kept_buffer {
    memtap_record *recs;
    size_t cap;
    uint64_t stamp;     /* trace_keep_stamp's when the cursor left it */
} kept_buffer;

/* A call stack of the STACKS table: its frames in memtap_trace.frames. */
typedef struct stack_row {
    uint32_t id, n;
    size_t at;
} stack_row;

/* An INFO value as memtap_trace_info hands it out: a copy that ends with
 * its line, kept until the trace is closed. */
typedef struct info_value {
    struct info_value *next;
    const char *from;      /* where in the info text it was copied from */
    char text[];
} info_value;

struct memtap_trace {
    int fd;
    uint64_t file_size;
    memtap_file_header hdr;
    memtap_trace_health health;
    chunk_ref *refs;
    size_t nrefs, refs_cap;
    memtap_module *mods;
    size_t nmods, mods_cap;
    char *maps;
    char *info;
    cursor *cursors;
    size_t ncursors, cursors_cap;
    size_t *tid_slots;  /* open addressing: tid -> cursor index + 1 */
    size_t tid_cap;     /* a power of two, at least twice ncursors */
    uint64_t buffered;  /* bytes of decompressed records held by cursors,
                           of site tables and of metadata chunks */
    uint64_t budget;    /* the most they may hold */
    uint64_t meta_bytes; /* of module, maps and info chunks, kept */
    int started;        /* the walk has begun (rewind done) */
    uint64_t last_time; /* the latest chunk time the scan unwrapped */
    trace_clock run_clock; /* of the run next_run returned last (of 0:
                              no times) */
    uint64_t run_n;      /* its records */
    size_t lent;        /* records of the top cursor memtap_trace_next_run
                           lent out: passed at the next call */
    size_t *heap;       /* min-heap of cursor indices by next seq */
    size_t nheap;
    ZSTD_DCtx *dctx;
    void *zbuf;
    size_t zbuf_cap;
    uint8_t *packed;    /* a packed chunk's bytes, decompressed */
    size_t packed_cap;
    trace_packer *unpacker; /* unpacks them (its 96 KiB cleared once) */
    const trace_selection *selection; /* trace_select's */
    info_value *values;  /* memtap_trace_info's answers, terminated */
    trace_site_table site_tabs[1u << (32 - MEMTAP_SITE_BITS)];
    trace_sites sites;  /* site_tabs: what access runs refer to */
    chunk_ref *site_refs; /* the SITES chunks, read when the walk starts
                             (info and the run's summary need none; libc's
                             take a millisecond to decompress) */
    size_t nsite_refs, site_refs_cap;
    int sites_loaded;   /* load_sites has run: the walk's first start */
    uint64_t *frames;   /* the STACKS table's frames, row after row */
    size_t nframes, frames_cap;
    stack_row *stacks;  /* its rows, sorted by id once the scan is done */
    size_t nstacks, stacks_cap;
    uint64_t scanned;   /* where the scan stands: the next chunk's offset */
    size_t sites_read;  /* of site_refs, loaded */
    /* following a trace still being written (trace_follow_open) */
    trace_writing_fn writing; /* NULL: the file is whole */
    void *writing_arg;
    int flags;          /* TRACE_FOLLOW_* */
    size_t handed;      /* event chunk refs handed out, in file order */
    size_t stacks_sorted;
    cursor follow;      /* the chunk being handed out */
    /* lent records kept past the next call (trace_keep_stamp) */
    int keep_lent;
    uint64_t keep_stamp;
    kept_buffer *left;  /* buffers cursors left, by rising stamp */
    size_t nleft, left_cap;
    kept_buffer *spare; /* left ones no run refers to, for the next loads
                           (as many as were lent at once: no more) */
    size_t nspare, spare_cap;
};

const char *memtap_status_string(int status)
{
    switch (status) {
    case MEMTAP_OK: return "success";
    case MEMTAP_E_IO: return "input/output error";
    case MEMTAP_E_NOMEM: return "out of memory";
    case MEMTAP_E_FORMAT: return "not a memtap trace file";
    case MEMTAP_E_VERSION: return "unsupported trace version";
    case MEMTAP_E_CORRUPT: return "corrupt trace data";
    case MEMTAP_E_INVALID: return "invalid argument";
    case MEMTAP_E_COMPRESS: return "compression failed";
    case MEMTAP_E_LIMIT: return "its threads' events need more memory to "
                                "merge than MEMTAP_READER_MEMORY (MiB) "
                                "allows";
    default: return "unknown error";
    }
}

static int read_at(int fd, void *buf, size_t len, uint64_t off)
{
    char *p = buf;
    while (len > 0) {
        ssize_t n = pread(fd, p, len, (off_t)off);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return MEMTAP_E_IO;
        }
        if (n == 0)
            return MEMTAP_E_CORRUPT; /* short file */
        p += n;
        off += (uint64_t)n;
        len -= (size_t)n;
    }
    return MEMTAP_OK;
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return MEMTAP_OK;
    size_t n = *cap ? *cap : 16;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, n * elem);
    if (!q)
        return MEMTAP_E_NOMEM;
    *p = q;
    *cap = n;
    return MEMTAP_OK;
}

static int header_valid(const memtap_chunk_header *h)
{
    if (h->magic != MEMTAP_CHUNK_MAGIC ||
        h->checksum != memtap_chunk_header_checksum(h))
        return 0;
    if (h->type < MEMTAP_CHUNK_EVENTS || h->type > MEMTAP_CHUNK_TABLE)
        return 0;
    if (h->raw_size > MEMTAP_CHUNK_MAX_RAW ||
        h->stored_size > ZSTD_compressBound(h->raw_size) + 64)
        return 0;
    if (h->type == MEMTAP_CHUNK_EVENTS &&
        (uint64_t)h->count * sizeof(memtap_record) != h->raw_size)
        return 0;
    if (h->type == MEMTAP_CHUNK_PACKED &&
        ((uint64_t)h->count * sizeof(memtap_record) > MEMTAP_CHUNK_MAX_RAW ||
         h->raw_size > (uint64_t)h->count * TRACE_PACKED_MAX ||
         (uint64_t)h->raw_size * 16 < h->count)) /* 2 bytes: 32 records */
        return 0;
    return 1;
}

/* Reads and decompresses a chunk payload into dst (raw bytes). */
static int load_payload(memtap_trace *t, uint64_t off, uint32_t stored,
                        void *dst, uint32_t raw)
{
    int rc = grow(&t->zbuf, &t->zbuf_cap, stored ? stored : 1, 1);
    if (rc)
        return rc;
    rc = read_at(t->fd, t->zbuf, stored, off);
    if (rc)
        return rc;
    size_t n = ZSTD_decompressDCtx(t->dctx, dst, raw, t->zbuf, stored);
    if (ZSTD_isError(n) || n != raw)
        return MEMTAP_E_CORRUPT;
    return MEMTAP_OK;
}

/* Copies a recorded path to out (NUL-terminated), its control characters
 * as \xNN: a newline or an escape sequence in a crafted trace's module
 * name must not forge lines of show and info nor reach a terminal. */
static void escape_path(char *out, const char *in, size_t len)
{
    for (size_t i = 0; i < len && in[i]; i++) {
        unsigned char c = (unsigned char)in[i];
        if (c < 0x20 || c == 0x7f) {
            *out++ = '\\';
            *out++ = 'x';
            *out++ = "0123456789abcdef"[c >> 4];
            *out++ = "0123456789abcdef"[c & 15];
        } else {
            *out++ = (char)c;
        }
    }
    *out = '\0';
}

static int parse_modules(memtap_trace *t, const char *raw, size_t len,
                         uint32_t count)
{
    size_t off = 0;
    for (uint32_t i = 0; i < count; i++) {
        memtap_module_entry e;
        if (len - off < sizeof e)
            return MEMTAP_E_CORRUPT;
        memcpy(&e, raw + off, sizeof e);
        size_t need = sizeof e + (size_t)e.nsegs * sizeof(memtap_segment) +
                      e.path_len;
        if (e.entry_size < need || e.entry_size > len - off ||
            e.build_id_len > sizeof e.build_id || e.path_len > PATH_MAX)
            return MEMTAP_E_CORRUPT; /* no path of Linux's is longer */
        int rc = grow((void **)&t->mods, &t->mods_cap, t->nmods + 1,
                      sizeof *t->mods);
        if (rc)
            return rc;
        /* one allocation per module: entry copy, segments, path (each
         * control character as \xNN, 3 more bytes), NUL */
        size_t fixed = need - e.path_len;
        char *blob = malloc(fixed + 4 * (size_t)e.path_len + 1);
        if (!blob)
            return MEMTAP_E_NOMEM;
        memcpy(blob, raw + off, fixed);
        escape_path(blob + fixed, raw + off + fixed, e.path_len);
        memtap_module *m = &t->mods[t->nmods++];
        memset(m, 0, sizeof *m);
        m->id = e.id;
        m->flags = e.flags;
        m->seq = e.seq;
        m->base = e.base;
        m->build_id = ((memtap_module_entry *)(void *)blob)->build_id;
        m->build_id_len = e.build_id_len;
        m->segs = (const memtap_segment *)(void *)(blob + sizeof e);
        m->nsegs = e.nsegs;
        m->path = blob + sizeof e + (size_t)e.nsegs * sizeof(memtap_segment);
        off += e.entry_size;
    }
    return MEMTAP_OK;
}

/* Takes the sites of one SITES chunk into the module's table (created by
 * the first chunk of its tag; every chunk must agree on the size).  A
 * table that would pass the reader's memory budget is refused as corrupt:
 * a few bytes of header may claim 2^24 sites. */
static int parse_sites(memtap_trace *t, const char *raw, size_t len)
{
    memtap_sites_header h;
    if (len < sizeof h)
        return MEMTAP_E_CORRUPT;
    memcpy(&h, raw, sizeof h);
    if (h.tag >= t->sites.ntabs || h.nsites > (1u << MEMTAP_SITE_BITS) ||
        h.first > h.nsites || h.n > h.nsites - h.first ||
        (len - sizeof h) / sizeof(memtap_site) != h.n ||
        (len - sizeof h) % sizeof(memtap_site))
        return MEMTAP_E_CORRUPT;
    trace_site_table *tab = &t->site_tabs[h.tag];
    if (tab->sites && (tab->nsites != h.nsites || tab->bias != h.bias))
        return MEMTAP_E_CORRUPT;
    if (!tab->sites) {
        uint64_t bytes = (uint64_t)(h.nsites ? h.nsites : 1) *
                         sizeof(memtap_site);
        if (t->buffered + bytes > t->budget)
            return MEMTAP_E_CORRUPT;
        memtap_site *all = calloc(h.nsites ? h.nsites : 1, sizeof *all);
        if (!all)
            return MEMTAP_E_NOMEM;
        t->buffered += bytes;
        tab->sites = all;
        tab->nsites = h.nsites;
        tab->bias = h.bias;
    }
    memtap_site *to = (memtap_site *)(uintptr_t)tab->sites + h.first;
    memcpy(to, raw + sizeof h, (size_t)h.n * sizeof(memtap_site));
    for (uint32_t i = 0; t->hdr.version < 6 && i < h.n; i++)
        to[i].due = 0; /* a reserved byte before format 6 */
    return MEMTAP_OK;
}

/* Takes the rows of a STACKS table chunk. */
static int parse_stacks(memtap_trace *t, const char *raw, size_t len,
                        uint32_t rows)
{
    for (uint32_t i = 0; i < rows; i++) {
        uint32_t row[2];
        if (len < sizeof row)
            return MEMTAP_E_CORRUPT;
        memcpy(row, raw, sizeof row);
        raw += sizeof row;
        len -= sizeof row;
        if (row[1] > MEMTAP_STACK_MAX || len < row[1] * sizeof(uint64_t))
            return MEMTAP_E_CORRUPT;
        int rc = grow((void **)&t->frames, &t->frames_cap,
                      t->nframes + row[1], sizeof *t->frames);
        if (!rc)
            rc = grow((void **)&t->stacks, &t->stacks_cap, t->nstacks + 1,
                      sizeof *t->stacks);
        if (rc)
            return rc;
        memcpy(t->frames + t->nframes, raw, row[1] * sizeof(uint64_t));
        t->stacks[t->nstacks++] = (stack_row){ row[0], row[1], t->nframes };
        t->nframes += row[1];
        raw += row[1] * sizeof(uint64_t);
        len -= row[1] * sizeof(uint64_t);
    }
    return len ? MEMTAP_E_CORRUPT : MEMTAP_OK;
}

/* Takes the rows of a TABLE chunk; a table this reader does not know is
 * passed over. */
static int parse_table(memtap_trace *t, const char *raw, size_t len)
{
    memtap_table_header h;
    if (len < sizeof h)
        return MEMTAP_E_CORRUPT;
    memcpy(&h, raw, sizeof h);
    if (h.table != MEMTAP_TABLE_STACKS)
        return MEMTAP_OK;
    return parse_stacks(t, raw + sizeof h, len - sizeof h, h.rows);
}

static int stack_cmp(const void *a, const void *b)
{
    const stack_row *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

int memtap_trace_stack(const memtap_trace *t, uint32_t id,
                       const uint64_t **frames, size_t *n)
{
    if (!t || !frames || !n || !t->nstacks)
        return 0;
    const stack_row key = { .id = id };
    const stack_row *r = bsearch(&key, t->stacks, t->nstacks,
                                 sizeof *t->stacks, stack_cmp);
    if (!r)
        return 0;
    *frames = t->frames + r->at;
    *n = r->n;
    return 1;
}

/* Appends text to a NUL-terminated string owned by the trace. */
static int append_text(char **dst, const char *src, size_t len)
{
    size_t have = *dst ? strlen(*dst) : 0;
    char *p = realloc(*dst, have + len + 1);
    if (!p)
        return MEMTAP_E_NOMEM;
    memcpy(p + have, src, len);
    p[have + len] = '\0';
    /* a payload with an embedded NUL is cut there: strings stay strings */
    *dst = p;
    return MEMTAP_OK;
}

/* Decodes a small chunk (modules, maps, info) right away. */
static int load_meta_chunk(memtap_trace *t, const memtap_chunk_header *h,
                           uint64_t payload)
{
    /* what the chunk holds stays (module table, maps, info text): within
     * META_BUDGET and the reader's budget, so that a few KiB of chunks
     * that each claim 64 MiB of zeros cannot take the machine's memory */
    if (h->type != MEMTAP_CHUNK_SITES) {
        if (h->raw_size > META_BUDGET - t->meta_bytes ||
            h->raw_size > t->budget - t->buffered)
            return MEMTAP_E_CORRUPT;
        t->meta_bytes += h->raw_size;
        t->buffered += h->raw_size;
    }
    char *raw = malloc(h->raw_size ? h->raw_size : 1);
    if (!raw)
        return MEMTAP_E_NOMEM;
    int rc = load_payload(t, payload, h->stored_size, raw, h->raw_size);
    if (rc == MEMTAP_OK) {
        if (h->type == MEMTAP_CHUNK_MODULES)
            rc = parse_modules(t, raw, h->raw_size, h->count);
        else if (h->type == MEMTAP_CHUNK_SITES)
            rc = parse_sites(t, raw, h->raw_size);
        else if (h->type == MEMTAP_CHUNK_MAPS)
            rc = append_text(&t->maps, raw, h->raw_size);
        else if (h->type == MEMTAP_CHUNK_TABLE)
            rc = parse_table(t, raw, h->raw_size);
        else
            rc = append_text(&t->info, raw, h->raw_size);
    }
    free(raw);
    return rc;
}

/* load_meta_chunk, a corrupt chunk counted as such (the scan counts each
 * chunk it passes; a corrupt one is taken back) and passed over. */
static int load_meta_counted(memtap_trace *t, const memtap_chunk_header *h,
                             uint64_t payload)
{
    int rc = load_meta_chunk(t, h, payload);
    if (rc != MEMTAP_E_CORRUPT)
        return rc;
    t->health.corrupt_chunks++;
    t->health.chunks--;
    return MEMTAP_OK;
}

static size_t tid_hash(uint32_t tid, size_t cap)
{
    return (size_t)fib_hash(tid, 44) & (cap - 1);
}

/* Rebuilds the tid table at twice the size. */
static int tid_table_grow(memtap_trace *t)
{
    size_t cap = t->tid_cap ? t->tid_cap * 2 : 64;
    size_t *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return MEMTAP_E_NOMEM;
    for (size_t i = 0; i < t->ncursors; i++) {
        size_t h = tid_hash(t->cursors[i].tid, cap);
        while (slots[h])
            h = (h + 1) & (cap - 1);
        slots[h] = i + 1;
    }
    free(t->tid_slots);
    t->tid_slots = slots;
    t->tid_cap = cap;
    return MEMTAP_OK;
}

/* The cursor of thread tid, created on first sight. */
static int cursor_of(memtap_trace *t, uint32_t tid, size_t *out)
{
    if (2 * (t->ncursors + 1) > t->tid_cap) {
        int rc = tid_table_grow(t);
        if (rc)
            return rc;
    }
    size_t h = tid_hash(tid, t->tid_cap);
    for (; t->tid_slots[h]; h = (h + 1) & (t->tid_cap - 1))
        if (t->cursors[t->tid_slots[h] - 1].tid == tid) {
            *out = t->tid_slots[h] - 1;
            return MEMTAP_OK;
        }
    int rc = grow((void **)&t->cursors, &t->cursors_cap, t->ncursors + 1,
                  sizeof *t->cursors);
    if (rc)
        return rc;
    cursor *c = &t->cursors[t->ncursors];
    memset(c, 0, sizeof *c);
    c->tid = tid;
    t->tid_slots[h] = ++t->ncursors;
    *out = t->ncursors - 1;
    return MEMTAP_OK;
}

/* A chunk header's time (microseconds + 1 modulo 2^32, or 0) as a 64-bit
 * one, near the latest before it in the file: chunks come nearly in the
 * order they closed. */
static uint64_t unwrap_time(memtap_trace *t, uint32_t time)
{
    if (time == 0)
        return 0;
    uint64_t last = t->last_time, round = 1ull << 32;
    uint64_t v = (last & ~(round - 1)) | time;
    if (v + round / 2 < last)
        v += round; /* past a wrap */
    else if (v > last + round / 2 && v >= round)
        v -= round; /* a late chunk from before one */
    if (v > t->last_time)
        t->last_time = v;
    return v;
}

static int add_event_chunk(memtap_trace *t, const memtap_chunk_header *h,
                           uint64_t payload)
{
    int rc = grow((void **)&t->refs, &t->refs_cap, t->nrefs + 1,
                  sizeof *t->refs);
    if (rc)
        return rc;
    chunk_ref *r = &t->refs[t->nrefs];
    r->payload = payload;
    r->stored = h->stored_size;
    r->raw = h->raw_size;
    r->tid = h->tid;
    r->count = h->count;
    r->type = h->type;
    r->time = unwrap_time(t, h->time);
    size_t ci;
    rc = cursor_of(t, h->tid, &ci);
    if (rc)
        return rc;
    cursor *c = &t->cursors[ci];
    rc = grow((void **)&c->chunks, &c->cap, c->nchunks + 1, sizeof(size_t));
    if (rc)
        return rc;
    c->chunks[c->nchunks++] = t->nrefs++;
    t->health.events += h->count;
    return MEMTAP_OK;
}

/* Finds the next offset after `from` holding a valid chunk header. */
static uint64_t resync(memtap_trace *t, uint64_t from)
{
    unsigned char buf[65536];
    uint64_t off = from;
    while (off + sizeof(memtap_chunk_header) <= t->file_size) {
        size_t want = sizeof buf;
        if (t->file_size - off < want)
            want = (size_t)(t->file_size - off);
        if (read_at(t->fd, buf, want, off) != MEMTAP_OK)
            break;
        for (size_t i = 0; i + sizeof(memtap_chunk_header) <= want; i++) {
            uint32_t magic;
            memcpy(&magic, buf + i, sizeof magic);
            if (magic != MEMTAP_CHUNK_MAGIC)
                continue;
            memtap_chunk_header h;
            memcpy(&h, buf + i, sizeof h);
            if (header_valid(&h))
                return off + i;
        }
        if (want < sizeof buf)
            break;
        off += want - sizeof(memtap_chunk_header) + 1;
    }
    return t->file_size;
}

/* Indexes the chunks from where the scan stands to the file's end: a
 * chunk cut short there ends a whole file (truncated), or is waited for
 * in a followed one. */
static int scan_chunks(memtap_trace *t)
{
    uint64_t off = t->scanned;
    int rc = MEMTAP_OK;
    while (off < t->file_size) {
        memtap_chunk_header h;
        if (t->file_size - off < sizeof h) {
            t->health.truncated = !t->writing;
            break;
        }
        rc = read_at(t->fd, &h, sizeof h, off);
        if (rc)
            break;
        if (!header_valid(&h)) {
            uint64_t next = resync(t, off + 1);
            t->health.corrupt_chunks++;
            t->health.skipped_bytes += next - off;
            off = next;
            continue;
        }
        uint64_t payload = off + sizeof h;
        if (t->file_size - payload < h.stored_size) {
            t->health.truncated = !t->writing;
            break;
        }
        if (h.type == MEMTAP_CHUNK_EVENTS || h.type == MEMTAP_CHUNK_PACKED) {
            if (!(t->flags & TRACE_FOLLOW_META))
                rc = add_event_chunk(t, &h, payload);
        } else if (h.type == MEMTAP_CHUNK_SITES) {
            rc = grow((void **)&t->site_refs, &t->site_refs_cap,
                      t->nsite_refs + 1, sizeof *t->site_refs);
            if (!rc)
                t->site_refs[t->nsite_refs++] =
                    (chunk_ref){ payload, h.stored_size, h.raw_size, h.tid,
                                 h.count, h.type, 0 };
        } else {
            rc = load_meta_counted(t, &h, payload);
        }
        if (rc)
            break;
        t->health.chunks++;
        off = payload + h.stored_size;
    }
    t->scanned = off;
    return rc;
}

/* Gives every module's site table the records of each site, a byte a
 * site (trace_site_table.records): what decoding an access run looks up
 * per entry, else worked out from the sites.  A table the memory budget
 * has no room for goes without. */
static void fill_site_records(memtap_trace *t)
{
    for (uint32_t tag = 0; tag < t->sites.ntabs; tag++) {
        trace_site_table *tab = &t->site_tabs[tag];
        if (!tab->sites || !tab->nsites || tab->records ||
            t->buffered + tab->nsites > t->budget)
            continue;
        uint8_t *records = malloc(tab->nsites);
        if (!records)
            continue;
        t->buffered += tab->nsites;
        trace_site_records_fill(&t->sites, tag, records);
        tab->records = records;
    }
}

/* Reads the SITES chunks the scan found into the site tables, then their
 * records bytes: when the walk first starts.  A chunk that fails to
 * decompress or to parse is counted corrupt, as the scan counts others. */
static int load_sites(memtap_trace *t)
{
    for (; t->sites_read < t->nsite_refs; t->sites_read++) {
        const chunk_ref *r = &t->site_refs[t->sites_read];
        memtap_chunk_header h = { .type = r->type, .stored_size = r->stored,
                                  .raw_size = r->raw };
        int rc = load_meta_counted(t, &h, r->payload);
        if (rc)
            return rc;
    }
    if (!t->writing) /* (a followed table may still come in pieces) */
        fill_site_records(t);
    t->sites_loaded = 1;
    return MEMTAP_OK;
}

/* Keeps the STACKS rows sorted by id as they come. */
static void sort_stacks(memtap_trace *t)
{
    if (t->nstacks != t->stacks_sorted)
        qsort(t->stacks, t->nstacks, sizeof *t->stacks, stack_cmp);
    t->stacks_sorted = t->nstacks;
}

/* Reads and checks the file header of the descriptor the trace owns. */
static int read_header(memtap_trace *t)
{
    struct stat st;
    if (fstat(t->fd, &st) != 0)
        return MEMTAP_E_IO;
    if (!S_ISREG(st.st_mode)) {
        errno = EINVAL;
        return MEMTAP_E_FORMAT;
    }
    t->file_size = (uint64_t)st.st_size;
    if (t->file_size < sizeof t->hdr)
        return MEMTAP_E_FORMAT;
    t->scanned = sizeof t->hdr;
    int rc = read_at(t->fd, &t->hdr, sizeof t->hdr, 0);
    if (rc)
        return rc;
    if (memcmp(t->hdr.magic, MEMTAP_TRACE_MAGIC, sizeof t->hdr.magic) != 0)
        return MEMTAP_E_FORMAT;
    if (t->hdr.version < MEMTAP_TRACE_VERSION_MIN ||
        t->hdr.version > MEMTAP_TRACE_VERSION ||
        t->hdr.record_size != sizeof(memtap_record) ||
        t->hdr.header_size < sizeof t->hdr ||
        t->hdr.header_size > t->file_size)
        return MEMTAP_E_VERSION;
    t->scanned = t->hdr.header_size;
    return MEMTAP_OK;
}

/* Opens the trace on fd, which it then owns (followed while writing is
 * not NULL, as flags say). */
static int open_owned_fd(int fd, trace_writing_fn writing, void *arg, int flags,
                         memtap_trace **out)
{
    *out = NULL;
    memtap_trace *t = calloc(1, sizeof *t);
    if (!t) {
        close(fd);
        return MEMTAP_E_NOMEM;
    }
    t->fd = fd;
    t->writing = writing;
    t->writing_arg = arg;
    t->flags = flags;
    t->sites.tabs = t->site_tabs;
    t->sites.ntabs = sizeof t->site_tabs / sizeof *t->site_tabs;
    const char *mib = getenv(ENV_READER_MEMORY);
    t->budget = (mib && atoll(mib) > 0 ? (uint64_t)atoll(mib) : 4096) << 20;
    t->dctx = ZSTD_createDCtx();
    int rc = t->dctx ? read_header(t) : MEMTAP_E_NOMEM;
    if (rc == MEMTAP_OK)
        rc = scan_chunks(t);
    if (rc == MEMTAP_OK)
        sort_stacks(t);
    if (rc != MEMTAP_OK) {
        int saved = errno;
        memtap_trace_close(t);
        errno = saved;
        return rc;
    }
    *out = t;
    return MEMTAP_OK;
}

int memtap_trace_open(const char *path, memtap_trace **out)
{
    if (!path || !out)
        return MEMTAP_E_INVALID;
    *out = NULL;
    /* a path may name anything: a FIFO must not block, a terminal must
     * not become ours */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return MEMTAP_E_IO;
    return open_owned_fd(fd, NULL, NULL, 0, out);
}

int memtap_trace_open_fd(int fd, memtap_trace **out)
{
    if (fd < 0 || !out)
        return MEMTAP_E_INVALID;
    *out = NULL;
    int own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (own < 0)
        return MEMTAP_E_IO;
    return open_owned_fd(own, NULL, NULL, 0, out);
}

void trace_select(memtap_trace *t, const trace_selection *sel)
{
    t->selection = sel;
}

const trace_selection *trace_selected(const memtap_trace *t)
{
    return t->selection;
}

size_t trace_threads(const memtap_trace *t, uint32_t *tids, size_t max)
{
    for (size_t i = 0; i < t->ncursors && i < max; i++)
        tids[i] = t->cursors[i].tid;
    return t->ncursors;
}

void memtap_trace_close(memtap_trace *t)
{
    if (!t)
        return;
    if (t->fd >= 0)
        close(t->fd);
    for (size_t i = 0; i < t->nmods; i++)
        free((void *)(t->mods[i].build_id -
                      offsetof(memtap_module_entry, build_id)));
    for (size_t i = 0; i < t->ncursors; i++) {
        free(t->cursors[i].chunks);
        free(t->cursors[i].recs);
    }
    free(t->cursors);
    free(t->follow.recs);
    trace_keep_end(t);
    free(t->tid_slots);
    free(t->heap);
    free(t->mods);
    free(t->refs);
    free(t->site_refs);
    free(t->maps);
    free(t->info);
    free(t->frames);
    free(t->stacks);
    while (t->values) {
        info_value *next = t->values->next;
        free(t->values);
        t->values = next;
    }
    free(t->zbuf);
    free(t->packed);
    free(t->unpacker);
    for (size_t i = 0; i < t->sites.ntabs; i++) {
        free((void *)(uintptr_t)t->site_tabs[i].sites);
        free((void *)(uintptr_t)t->site_tabs[i].records);
    }
    ZSTD_freeDCtx(t->dctx);
    free(t);
}

const memtap_file_header *memtap_trace_header(const memtap_trace *t)
{
    return &t->hdr;
}

const memtap_trace_health *memtap_trace_get_health(const memtap_trace *t)
{
    return &t->health;
}

size_t memtap_trace_module_count(const memtap_trace *t)
{
    return t->nmods;
}

const memtap_module *memtap_trace_module_at(const memtap_trace *t, size_t i)
{
    return i < t->nmods ? &t->mods[i] : NULL;
}

const char *memtap_trace_maps(const memtap_trace *t)
{
    return t->maps ? t->maps : "";
}

const char *memtap_trace_info(const memtap_trace *t, const char *key)
{
    size_t klen = strlen(key);
    const char *found = NULL; /* later chunks (the end note) override */
    for (const char *p = t->info; p && *p;) {
        const char *eol = strchr(p, '\n');
        if (strncmp(p, key, klen) == 0 && p[klen] == '=')
            found = p + klen + 1; /* the value runs to the newline */
        if (!eol)
            break;
        p = eol + 1;
    }
    if (!found)
        return NULL;
    memtap_trace *mt = (memtap_trace *)t; /* the answers are a cache */
    for (info_value *v = mt->values; v; v = v->next)
        if (v->from == found)
            return v->text;
    size_t len = strcspn(found, "\n");
    info_value *v = malloc(sizeof *v + len + 1);
    if (!v)
        return NULL;
    v->from = found;
    memcpy(v->text, found, len);
    v->text[len] = '\0';
    v->next = mt->values;
    mt->values = v;
    return v->text;
}

/* Decodes an event chunk's records into out (room for r->count);
 * *ordered: whether their sequence numbers rise from each to the next. */
static int load_records(memtap_trace *t, const chunk_ref *r,
                        memtap_record *out, int *ordered)
{
    *ordered = 0;
    if (r->type == MEMTAP_CHUNK_EVENTS)
        return load_payload(t, r->payload, r->stored, out, r->raw);
    int rc = grow((void **)&t->packed, &t->packed_cap, r->raw ? r->raw : 1, 1);
    if (!rc && !t->unpacker && !(t->unpacker = calloc(1, sizeof *t->unpacker)))
        rc = MEMTAP_E_NOMEM;
    if (!rc)
        rc = load_payload(t, r->payload, r->stored, t->packed, r->raw);
    if (!rc && trace_events_unpack(t->unpacker, t->packed, r->raw, out,
                                   r->count, &t->sites, ordered) != 0)
        rc = MEMTAP_E_CORRUPT;
    return rc;
}

/* Leaves c's buffer to the runs lent from it (trace_keep_stamp). */
static int cursor_leave(memtap_trace *t, cursor *c)
{
    int rc = grow((void **)&t->left, &t->left_cap, t->nleft + 1, sizeof *t->left);
    if (rc)
        return rc;
    t->left[t->nleft++] = (kept_buffer){ c->recs, c->recs_cap, t->keep_stamp };
    c->recs = NULL;
    c->recs_cap = c->nrecs = c->pos = 0;
    return MEMTAP_OK;
}

static void free_spares(memtap_trace *t)
{
    while (t->nspare) {
        kept_buffer *b = &t->spare[--t->nspare];
        t->buffered -= (uint64_t)b->cap * sizeof *b->recs;
        free(b->recs);
    }
}

/* Gives c the largest spare buffer, if any. */
static void cursor_take_spare(memtap_trace *t, cursor *c)
{
    if (!t->nspare)
        return;
    size_t best = 0;
    for (size_t i = 1; i < t->nspare; i++)
        if (t->spare[i].cap > t->spare[best].cap)
            best = i;
    c->recs = t->spare[best].recs;
    c->recs_cap = t->spare[best].cap;
    t->spare[best] = t->spare[--t->nspare];
}

/* Makes room for n records in c's buffer, within the trace's budget; a
 * buffer whose records were lent is left to them first. */
static int cursor_reserve(memtap_trace *t, cursor *c, size_t n)
{
    if (t->keep_lent) {
        if (c->recs) {
            int rc = cursor_leave(t, c);
            if (rc)
                return rc;
        }
        cursor_take_spare(t, c);
    }
    if (n <= c->recs_cap)
        return MEMTAP_OK;
    uint64_t have = (uint64_t)c->recs_cap * sizeof *c->recs;
    uint64_t need = (uint64_t)n * sizeof *c->recs;
    if (t->buffered - have + need > t->budget)
        free_spares(t); /* (kept for speed only) */
    if (t->buffered - have + need > t->budget)
        return MEMTAP_E_LIMIT;
    memtap_record *r = realloc(c->recs, (size_t)need);
    if (!r)
        return MEMTAP_E_NOMEM;
    c->recs = r;
    c->recs_cap = n;
    t->buffered = t->buffered - have + need;
    return MEMTAP_OK;
}

/* Gives back the buffer of a cursor that has nothing left (to the runs
 * lent from it while they are kept). */
static int cursor_release(memtap_trace *t, cursor *c)
{
    if (t->keep_lent && c->recs)
        return cursor_leave(t, c);
    t->buffered -= (uint64_t)c->recs_cap * sizeof *c->recs;
    free(c->recs);
    c->recs = NULL;
    c->recs_cap = c->nrecs = c->pos = 0;
    return MEMTAP_OK;
}

void trace_keep_stamp(memtap_trace *t, uint64_t stamp)
{
    t->keep_lent = 1;
    t->keep_stamp = stamp;
}

void trace_keep_until(memtap_trace *t, uint64_t stamp)
{
    size_t n = 0;
    while (n < t->nleft && t->left[n].stamp < stamp) {
        kept_buffer *b = &t->left[n++];
        if (t->keep_lent && grow((void **)&t->spare, &t->spare_cap, t->nspare + 1,
                                 sizeof *t->spare) == MEMTAP_OK) {
            t->spare[t->nspare++] = *b;
            continue;
        }
        t->buffered -= (uint64_t)b->cap * sizeof *b->recs;
        free(b->recs);
    }
    if (n) {
        memmove(t->left, t->left + n, (t->nleft - n) * sizeof *t->left);
        t->nleft -= n;
    }
}

void trace_keep_end(memtap_trace *t)
{
    t->keep_lent = 0;
    trace_keep_until(t, UINT64_MAX);
    free_spares(t);
    free(t->spare);
    free(t->left);
    t->spare = t->left = NULL;
    t->spare_cap = t->left_cap = 0;
}

/* Loads chunk r into c, its records made from the time `from` (0: not
 * known) to the chunk's: 1, 0 when r is corrupt (counted), or a negative
 * status. */
static int cursor_load(memtap_trace *t, cursor *c, const chunk_ref *r,
                       uint64_t from)
{
    int rc = cursor_reserve(t, c, (size_t)r->count + 1);
    if (rc == MEMTAP_OK)
        rc = load_records(t, r, c->recs, &c->ordered);
    if (rc == MEMTAP_E_CORRUPT) {
        t->health.corrupt_chunks++;
        return 0;
    }
    if (rc)
        return rc;
    c->nrecs = r->count;
    c->pos = 0;
    c->from = from ? from : 1;
    c->to = r->time;
    if (!c->to || c->from > c->to)
        c->from = c->to;
    return 1;
}

/* Loads the cursor's next decodable chunk; 0 when it has none left. */
static int cursor_fill(memtap_trace *t, cursor *c)
{
    while (c->next < c->nchunks) {
        /* from the thread's chunk before, or the file's for its first */
        size_t k = c->chunks[c->next++];
        int rc = cursor_load(t, c, &t->refs[k],
                             c->to ? c->to : k > 0 ? t->refs[k - 1].time : 1);
        if (rc < 0)
            return rc;
        if (rc && c->nrecs)
            return 1;
    }
    int rc = cursor_release(t, c);
    return rc < 0 ? rc : 0;
}

static int cursor_less(const memtap_trace *t, size_t a, size_t b)
{
    const cursor *x = &t->cursors[a], *y = &t->cursors[b];
    uint64_t sx = x->recs[x->pos].seq, sy = y->recs[y->pos].seq;
    return sx < sy || (sx == sy && x->tid < y->tid);
}

static void heap_down(memtap_trace *t, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < t->nheap && cursor_less(t, t->heap[l], t->heap[m]))
            m = l;
        if (r < t->nheap && cursor_less(t, t->heap[r], t->heap[m]))
            m = r;
        if (m == i)
            return;
        size_t tmp = t->heap[i];
        t->heap[i] = t->heap[m];
        t->heap[m] = tmp;
        i = m;
    }
}

int trace_run_clock(const memtap_trace *t, trace_clock *c)
{
    *c = t->run_clock;
    return c->of != 0;
}

int memtap_trace_run_time(const memtap_trace *t, uint64_t *first_us,
                          uint64_t *last_us)
{
    if (!t->run_clock.of || !t->run_n)
        return 0;
    *first_us = trace_clock_at(&t->run_clock, 0);
    *last_us = trace_clock_at(&t->run_clock, t->run_n - 1);
    return 1;
}

uint64_t memtap_trace_duration_us(const memtap_trace *t)
{
    return t->last_time ? t->last_time - 1 : 0;
}

int memtap_trace_rewind(memtap_trace *t)
{
    if (t->writing) /* (a followed trace is read once, as it comes) */
        return t->started ? MEMTAP_E_INVALID : MEMTAP_OK;
    if (!t->sites_loaded) {
        int rc = load_sites(t);
        if (rc)
            return rc;
    }
    t->started = 1;
    t->lent = 0;
    free(t->heap);
    t->heap = calloc(t->ncursors ? t->ncursors : 1, sizeof *t->heap);
    if (!t->heap)
        return MEMTAP_E_NOMEM;
    t->nheap = 0;
    for (size_t i = 0; i < t->ncursors; i++) {
        t->cursors[i].next = 0;
        t->cursors[i].returned = 0;
        t->cursors[i].to = 0;
        int rc = cursor_fill(t, &t->cursors[i]);
        if (rc < 0)
            return rc;
        if (rc > 0)
            t->heap[t->nheap++] = i;
    }
    for (size_t i = t->nheap; i-- > 0;)
        heap_down(t, i);
    return MEMTAP_OK;
}

/* Moves the cursor at the top of the heap past its current record. */
static int advance_top(memtap_trace *t)
{
    cursor *c = &t->cursors[t->heap[0]];
    if (++c->pos == c->nrecs) {
        int rc = cursor_fill(t, c);
        if (rc < 0)
            return rc;
        if (rc == 0)
            t->heap[0] = t->heap[--t->nheap];
    }
    heap_down(t, 0);
    return MEMTAP_OK;
}

/* Starts the walk, or passes what memtap_trace_next_run lent out (its
 * records stay in the cursor's buffer until then). */
static int settle(memtap_trace *t)
{
    if (!t->started)
        return memtap_trace_rewind(t);
    if (t->lent) {
        t->cursors[t->heap[0]].pos += t->lent - 1;
        t->lent = 0;
        return advance_top(t);
    }
    return MEMTAP_OK;
}

/* Whether the top cursor's current record was returned before (a chunk
 * written twice: a thread's records come in increasing sequence); it is
 * passed and counted then. */
static int skip_duplicate(memtap_trace *t, int *rc)
{
    cursor *c = &t->cursors[t->heap[0]];
    if (!c->returned || c->recs[c->pos].seq > c->last_seq)
        return 0;
    t->health.duplicates++;
    *rc = advance_top(t);
    return 1;
}

static int follow_next_run(memtap_trace *t, const memtap_record **recs,
                           uint32_t *tid, size_t max);

/* Lends the caller the n records of c from where it stands, as a run
 * (passed at the next call); returns n. */
static int lend_run(memtap_trace *t, const cursor *c, size_t n,
                    const memtap_record **recs, uint32_t *tid)
{
    *recs = &c->recs[c->pos];
    *tid = c->tid;
    /* (times kept + 1: 0 is "none") */
    t->run_clock = (trace_clock){ c->from - 1, c->to - c->from, c->pos,
                                  c->to ? c->nrecs : 0 };
    t->run_n = n;
    t->lent = n;
    return (int)n;
}

int memtap_trace_next(memtap_trace *t, memtap_event *ev)
{
    if (t->writing) {
        const memtap_record *r;
        int n = follow_next_run(t, &r, &ev->tid, 1);
        if (n > 0)
            ev->rec = *r;
        return n;
    }
    int rc = settle(t);
    while (rc == MEMTAP_OK && t->nheap > 0) {
        if (skip_duplicate(t, &rc))
            continue;
        cursor *c = &t->cursors[t->heap[0]];
        ev->rec = c->recs[c->pos];
        ev->tid = c->tid;
        c->last_seq = ev->rec.seq;
        c->returned = 1;
        rc = advance_top(t);
        return rc < 0 ? rc : 1;
    }
    return rc < 0 ? rc : 0;
}

/* Whether a record at seq comes before the other threads' next record at
 * seq limit (ties: when first). */
static int before(uint64_t seq, uint64_t limit, int first)
{
    return seq < limit || (seq == limit && first);
}

/* How many of r[0..n) from the first on come before the other threads'
 * next record (before()) and after each other. */
static size_t run_length(const memtap_record *r, size_t n, int ordered,
                         uint64_t limit, int first)
{
    if (!ordered) {
        size_t k = 1;
        while (k < n && r[k].seq > r[k - 1].seq &&
               before(r[k].seq, limit, first))
            k++;
        return k;
    }
    size_t lo = 1, hi = n; /* rising: the first one past limit, halving */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (before(r[mid].seq, limit, first))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int memtap_trace_next_run(memtap_trace *t, const memtap_record **recs,
                          uint32_t *tid, size_t max)
{
    if (t->writing)
        return follow_next_run(t, recs, tid, max);
    int rc = settle(t);
    if (max > INT_MAX)
        max = INT_MAX;
    while (rc == MEMTAP_OK && t->nheap > 0 && max > 0) {
        if (skip_duplicate(t, &rc))
            continue;
        cursor *c = &t->cursors[t->heap[0]];
        /* up to the other threads' next record (the smaller of the top's
         * children), the end of the buffer, or a record out of order */
        const cursor *o = NULL;
        for (size_t k = 1; k <= 2 && k < t->nheap; k++)
            if (!o || cursor_less(t, t->heap[k], (size_t)(o - t->cursors)))
                o = &t->cursors[t->heap[k]];
        uint64_t limit = o ? o->recs[o->pos].seq : UINT64_MAX;
        const memtap_record *r = &c->recs[c->pos];
        size_t room = c->nrecs - c->pos;
        size_t n = run_length(r, room < max ? room : max, c->ordered, limit,
                              o && c->tid < o->tid);
        c->last_seq = r[n - 1].seq;
        c->returned = 1;
        return lend_run(t, c, n, recs, tid);
    }
    return rc < 0 ? rc : 0;
}

/* ---- following a trace still being written ---- */

/* Indexes what the file gained since the last scan, and loads the site
 * tables and orders the call stacks that came with it. */
static int follow_scan(memtap_trace *t)
{
    struct stat st;
    if (fstat(t->fd, &st) != 0)
        return MEMTAP_E_IO;
    if ((uint64_t)st.st_size <= t->file_size)
        return MEMTAP_OK;
    t->file_size = (uint64_t)st.st_size;
    int rc = scan_chunks(t);
    if (rc == MEMTAP_OK && !(t->flags & TRACE_FOLLOW_META))
        rc = load_sites(t);
    sort_stacks(t);
    return rc;
}

int trace_follow_update(memtap_trace *t)
{
    uint64_t had = t->file_size;
    int rc = follow_scan(t);
    return rc < 0 ? rc : t->file_size > had;
}

/* Gives the whole pages of a chunk that was read back to the file system
 * (its header stays, so that a scan of the file still reads). */
static void punch_chunk(const memtap_trace *t, const chunk_ref *r)
{
    uint64_t page = 4096, lo = (r->payload + page - 1) & ~(page - 1);
    uint64_t hi = (r->payload + r->stored) & ~(page - 1);
    if ((t->flags & TRACE_FOLLOW_PUNCH) && hi > lo)
        (void)fallocate(t->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                        (off_t)lo, (off_t)(hi - lo));
}

/* Waits a moment for the writer of a followed trace. */
static void nap(void)
{
    struct timespec moment = { 0, 2 * 1000 * 1000 };
    nanosleep(&moment, NULL);
}

/* Loads the next event chunk in file order into t->follow, waiting for
 * it while the writer writes: 1, 0 at the end, or a negative status. */
static int follow_chunk(memtap_trace *t)
{
    cursor *c = &t->follow;
    for (;;) {
        if (t->handed < t->nrefs) {
            /* from the chunk before's time (the file's start: 1) */
            const chunk_ref *r = &t->refs[t->handed++];
            int rc = cursor_load(t, c, r, c->to);
            if (rc < 0)
                return rc;
            if (rc)
                punch_chunk(t, r);
            if (t->writing(t->writing_arg, r->payload + r->stored) < 0)
                return 0;
            c->tid = r->tid;
            if (rc && c->nrecs)
                return 1;
            continue;
        }
        /* asked first: whatever was written before the writer was done
         * is in the file for the scan after */
        const chunk_ref *last = t->handed ? &t->refs[t->handed - 1] : NULL;
        int writing = t->writing(t->writing_arg, last ? last->payload + last->stored
                                                      : t->hdr.header_size);
        int rc = follow_scan(t);
        if (rc)
            return rc;
        if (writing < 0)
            return 0;
        if (t->handed < t->nrefs)
            continue;
        if (!writing) {
            t->health.truncated = t->scanned < t->file_size;
            return 0;
        }
        nap();
    }
}

static int follow_next_run(memtap_trace *t, const memtap_record **recs,
                           uint32_t *tid, size_t max)
{
    cursor *c = &t->follow;
    if (!t->started) {
        t->started = 1;
        int rc = load_sites(t);
        if (rc)
            return rc;
    }
    c->pos += t->lent;
    t->lent = 0;
    while (c->pos >= c->nrecs) {
        int rc = follow_chunk(t);
        if (rc <= 0)
            return rc;
    }
    size_t n = c->nrecs - c->pos;
    return lend_run(t, c, n < max ? n : max < INT_MAX ? max : INT_MAX, recs, tid);
}

int trace_follow_open(const char *path, trace_writing_fn writing, void *arg,
                      int flags, memtap_trace **out)
{
    *out = NULL;
    for (;;) {
        /* asked first, as follow_chunk asks: a file the writer finished
         * before is whole when it is opened after */
        int more = writing(arg, 0) > 0;
        int fd = open(path, (flags & TRACE_FOLLOW_PUNCH ? O_RDWR : O_RDONLY) |
                                O_CLOEXEC | O_NOCTTY);
        struct stat st;
        int whole = fd >= 0 && fstat(fd, &st) == 0 &&
                    (uint64_t)st.st_size >= sizeof(memtap_file_header);
        if (whole || (fd >= 0 && !more))
            return open_owned_fd(fd, writing, arg, flags, out);
        if (fd >= 0)
            close(fd);
        if (!more)
            return MEMTAP_E_IO;
        nap();
    }
}
