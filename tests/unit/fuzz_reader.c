/*
 * fuzz_reader.c - feeds damaged trace files to the reader, through a memfd
 * (no file name, nothing shared between fuzzing jobs).
 *
 * Built with -fsanitize=fuzzer (MEMTAP_LIBFUZZER), LLVMFuzzerTestOneInput
 * takes the input as a trace file whose chunk header checksums it fixes
 * first, so that mutations reach the payloads; the seeds are in
 * tests/fuzz/corpus (written by "fuzz_reader --corpus DIR").
 *
 * Otherwise it is a deterministic loop the suite runs briefly:
 * "fuzz_reader ITERATIONS [SEED]" runs half the iterations on bytes of a
 * whole file and half on the decoded chunks (payload bytes, counts,
 * threads, module entries, duplicated, dropped and swapped chunks), each
 * chunk then encoded afresh so that it passes every checksum and reaches
 * the code that reads what is inside.
 */
#define _GNU_SOURCE
#include "memtap/trace.h"
#include "trace/chunk.h"
#include "trace/writer.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Reads everything a trace offers. */
static void read_all(int fd)
{
    memtap_trace *t;
    if (memtap_trace_open_fd(fd, &t) != MEMTAP_OK)
        return;
    for (size_t i = 0; i < memtap_trace_module_count(t); i++)
        (void)strlen(memtap_trace_module_at(t, i)->path);
    (void)memtap_trace_info(t, "end");
    (void)strlen(memtap_trace_maps(t));
    memtap_event ev;
    while (memtap_trace_next(t, &ev) > 0)
        ;
    memtap_trace_close(t);
}

/* Recomputes every chunk header's checksum along the file. */
static void fix_checksums(uint8_t *data, size_t size)
{
    if (size < sizeof(memtap_file_header))
        return;
    memtap_file_header fh;
    memcpy(&fh, data, sizeof fh);
    for (size_t off = fh.header_size;
         off >= sizeof fh && off + sizeof(memtap_chunk_header) <= size;) {
        memtap_chunk_header h;
        memcpy(&h, data + off, sizeof h);
        h.magic = MEMTAP_CHUNK_MAGIC;
        h.checksum = memtap_chunk_header_checksum(&h);
        memcpy(data + off, &h, sizeof h);
        if (h.stored_size > size - off - sizeof h)
            break;
        off += sizeof h + h.stored_size;
    }
}

static void read_bytes(const uint8_t *data, size_t size)
{
    int fd = memfd_create("memtap-fuzz", MFD_CLOEXEC);
    if (fd < 0)
        return;
    if (size == 0 || write(fd, data, size) == (ssize_t)size)
        read_all(fd);
    close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    fix_checksums(copy, size);
    read_bytes(copy, size);
    free(copy);
    return 0;
}

#ifndef MEMTAP_LIBFUZZER
static uint64_t rng_state;

static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* ---- chunks as the reader decodes them ---- */

#define MAX_PIECES 32
#define PIECE_MAX 8192

typedef struct piece {
    uint16_t type;
    uint32_t tid;
    uint32_t count;
    size_t len;
    uint8_t raw[PIECE_MAX];
} piece;

typedef struct doc {
    piece p[MAX_PIECES];
    size_t n;
} doc;

static piece *add(doc *d, uint16_t type, uint32_t tid, uint32_t count,
                  const void *raw, size_t len)
{
    piece *p = &d->p[d->n++];
    p->type = type;
    p->tid = tid;
    p->count = count;
    p->len = len;
    memcpy(p->raw, raw, len);
    return p;
}

/* A module's site table and a chunk of records and access runs on it. */
static void seed_runs(doc *d)
{
    struct {
        memtap_sites_header h;
        memtap_site s[3];
    } st = { { 0, 3, 0, 3, 0x400000, 0 },
             { { 0x100, 1, 8, 1, 0, 0, 1, 0, 0 },  /* leads the next */
               { 0x104, 1, 4, 0, 1, 8, 0, 1, 0 },
               { 0x108, 1, 8, 1, 1, 0, 0, 0, 0 } } };
    add(d, MEMTAP_CHUNK_SITES, 0, 3, &st, sizeof st);
    trace_site_table tab = { st.h.bias, st.s, 3, NULL };
    trace_sites sites = { &tab, 1 };
    trace_entry e[60];
    for (uint32_t i = 0; i < 60; i++)
        e[i] = (trace_entry){ i % 2 ? 2 : 0, 0, 0x601000 + i * 8 };
    uint8_t packed[2048];
    trace_packer pk;
    trace_packer_init(&pk);
    memtap_record m = { .seq = 300, .kind = 'M', .addr = 0x5000, .size = 8,
                        .count = 1 };
    uint8_t *o = trace_pack_record(&pk, &m, packed);
    const trace_entry *at = e;
    uint32_t records = 0;
    uint8_t *run = o;
    o = trace_run_pack(&pk, &sites, &at, e + 60, run, packed + sizeof packed,
                       1000, &records);
    trace_run_seal(&pk, run, 301, records);
    add(d, MEMTAP_CHUNK_PACKED, 3, records + 1, packed,
        (size_t)(o - packed));
}

/* A valid trace: info, maps, two modules, events of three threads (plain
 * and packed chunks), a thread's access runs. */
static void seed_doc(doc *d)
{
    static const char info[] = "pid=1\nexe=/bin/x\nend=exit\nend_seq=300\n";
    static const char maps[] = "00400000-00401000 r-xp 0 0:0 0 /bin/x\n";
    d->n = 0;
    add(d, MEMTAP_CHUNK_INFO, 0, 0, info, sizeof info - 1);
    add(d, MEMTAP_CHUNK_MAPS, 0, 0, maps, sizeof maps - 1);
    memtap_segment seg = { 0, 0x1000, 5, 0 };
    uint8_t entry[256], id[20] = { 1, 2, 3 };
    for (uint32_t m = 0; m < 2; m++) {
        const char *path = m ? "/lib/y.so" : "/bin/x";
        size_t n = trace_module_entry_encode(entry, sizeof entry, m, m,
                                             0x400000 + m * 0x100000,
                                             m ? 0 : MEMTAP_MODF_MAIN, id,
                                             sizeof id, &seg, 1, path,
                                             strlen(path));
        add(d, MEMTAP_CHUNK_MODULES, 0, 1, entry, n);
    }
    seed_runs(d);
    for (uint32_t c = 0; c < 6; c++) {
        memtap_record r[50];
        memset(r, 0, sizeof r);
        for (uint32_t i = 0; i < 50; i++) {
            r[i].seq = c * 50 + i;
            r[i].kind = (uint8_t)"LSMFYRCPEUWG"[i % 12];
            r[i].pc = 0x400100 + i;
            r[i].addr = 0x1000 + i * 8;
            r[i].size = 8;
            r[i].count = 1;
        }
        if (c % 2) { /* the packed form, as memtap writes it */
            uint8_t packed[50 * TRACE_PACKED_MAX];
            size_t n = trace_events_pack(r, 50, packed);
            add(d, MEMTAP_CHUNK_PACKED, c % 3, 50, packed, n);
        } else { /* the plain form of the first format */
            add(d, MEMTAP_CHUNK_EVENTS, c % 3, 50, r, sizeof r);
        }
    }
}

static void mutate_doc(doc *d)
{
    int mutations = 1 + (int)(rng() % 6);
    for (int k = 0; k < mutations && d->n > 0; k++) {
        piece *p = &d->p[rng() % d->n];
        switch (rng() % 8) {
        case 0: /* payload bit */
            if (p->len)
                p->raw[rng() % p->len] ^= (uint8_t)(1u << (rng() % 8));
            break;
        case 1: /* payload word: counts, sizes, sequence numbers */
            if (p->len >= 8) {
                uint64_t v = rng() % 3 ? rng() % 1024 : rng();
                memcpy(p->raw + rng() % (p->len - 7), &v, 4 + rng() % 5);
            }
            break;
        case 2: /* payload shorter (events: count kept or fixed) */
            p->len = rng() % (p->len + 1);
            if (p->type == MEMTAP_CHUNK_EVENTS && rng() % 2)
                p->count = (uint32_t)(p->len / sizeof(memtap_record));
            if (p->type == MEMTAP_CHUNK_PACKED && rng() % 2)
                p->count = (uint32_t)(p->len / 8);
            break;
        case 3: p->count = rng() % 2 ? p->count + 1 : (uint32_t)rng(); break;
        case 4: p->tid = (uint32_t)(rng() % 5); break;
        case 5: /* duplicate a chunk */
            if (d->n < MAX_PIECES)
                d->p[d->n++] = *p;
            break;
        case 6: /* drop a chunk */
            *p = d->p[--d->n];
            break;
        default: { /* swap two chunks */
            piece *q = &d->p[rng() % d->n], tmp = *p;
            *p = *q;
            *q = tmp;
        }
        }
    }
}

/* Encodes the document as a trace file into fd. */
static int write_doc(const doc *d, int fd, ZSTD_CCtx *cctx, uint8_t *out,
                     size_t cap)
{
    memtap_file_header h;
    trace_file_header_init(&h, 1, 0, 0, 0);
    if (trace_write_all(fd, &h, sizeof h))
        return -1;
    for (size_t i = 0; i < d->n; i++) {
        const piece *p = &d->p[i];
        size_t n = trace_chunk_encode(cctx, p->type, p->tid, p->count, p->raw,
                                      p->len, out, cap);
        if (n && trace_write_all(fd, out, n))
            return -1;
    }
    return 0;
}

static void structured(long iterations)
{
    static doc d;
    ZSTD_CCtx *cctx = ZSTD_createCCtx();
    size_t cap = trace_chunk_bound(PIECE_MAX);
    uint8_t *out = malloc(cap);
    for (long it = 0; cctx && out && it < iterations; it++) {
        seed_doc(&d);
        mutate_doc(&d);
        int fd = memfd_create("memtap-fuzz", MFD_CLOEXEC);
        if (fd < 0)
            break;
        if (write_doc(&d, fd, cctx, out, cap) == 0)
            read_all(fd);
        close(fd);
    }
    free(out);
    ZSTD_freeCCtx(cctx);
}

/* The seed document as a file's bytes. */
static uint8_t *seed_bytes(size_t *len)
{
    static doc d;
    seed_doc(&d);
    int fd = memfd_create("memtap-fuzz", MFD_CLOEXEC);
    ZSTD_CCtx *cctx = ZSTD_createCCtx();
    size_t cap = trace_chunk_bound(PIECE_MAX);
    uint8_t *out = malloc(cap), *buf = NULL;
    if (fd >= 0 && cctx && out && write_doc(&d, fd, cctx, out, cap) == 0) {
        off_t end = lseek(fd, 0, SEEK_END);
        buf = malloc((size_t)end);
        if (buf && pread(fd, buf, (size_t)end, 0) == end) {
            *len = (size_t)end;
        } else {
            free(buf);
            buf = NULL;
        }
    }
    free(out);
    ZSTD_freeCCtx(cctx);
    if (fd >= 0)
        close(fd);
    return buf;
}

static void bytewise(const uint8_t *seed, size_t len, long iterations)
{
    uint8_t *buf = malloc(len * 2);
    for (long it = 0; buf && it < iterations; it++) {
        memcpy(buf, seed, len);
        size_t n = len;
        int mutations = 1 + (int)(rng() % 8);
        for (int k = 0; k < mutations; k++) {
            switch (rng() % 4) {
            case 0: buf[rng() % n] ^= (uint8_t)(1u << (rng() % 8)); break;
            case 1: buf[rng() % n] = (uint8_t)rng(); break;
            case 2: n = 1 + rng() % n; break;          /* truncate */
            default: {                                  /* duplicate a span */
                size_t from = rng() % n, span = rng() % 64;
                if (from + span <= n && n + span <= len * 2) {
                    memmove(buf + from + span, buf + from, n - from);
                    n += span;
                }
            }
            }
        }
        if (rng() % 2)
            fix_checksums(buf, n);
        read_bytes(buf, n);
    }
    free(buf);
}

/* Writes the seed corpus for libFuzzer into dir. */
static int write_corpus(const char *dir)
{
    size_t len;
    uint8_t *seed = seed_bytes(&len);
    char path[4096];
    snprintf(path, sizeof path, "%s/seed", dir);
    FILE *f = seed ? fopen(path, "wb") : NULL;
    int ok = f && fwrite(seed, 1, len, f) == len;
    if (f && fclose(f) != 0)
        ok = 0;
    free(seed);
    if (!ok)
        fprintf(stderr, "fuzz_reader: %s: %s\n", path, strerror(errno));
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--corpus") == 0)
        return write_corpus(argv[2]);
    long iterations = argc > 1 ? atol(argv[1]) : 1000;
    rng_state = argc > 2 ? strtoull(argv[2], NULL, 10) : 88172645463325252ull;
    size_t len;
    uint8_t *seed = seed_bytes(&len);
    if (!seed)
        return 1;
    bytewise(seed, len, iterations / 2);
    structured(iterations - iterations / 2);
    free(seed);
    printf("fuzz_reader: %ld damaged traces read\n", iterations);
    return 0;
}
#endif
