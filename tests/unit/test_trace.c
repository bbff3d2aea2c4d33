/*
 * test_trace.c - the .mtr format: round trip through the writer and the
 * reader (merge order, modules, info, maps), truncation at every length,
 * corrupt chunks and headers, bad files.
 */
#include "check.h"
#include "trace/walk.h"
#include "memtap/trace.h"
#include "trace/chunk.h"
#include "trace/follow.h"
#include "trace/writer.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <unistd.h>

static char dir[] = "/tmp/memtap-test-trace-XXXXXX";

static char *path_in_dir(const char *name)
{
    static char buf[4][256];
    static int k;
    char *p = buf[k++ % 4];
    snprintf(p, 256, "%s/%s", dir, name);
    return p;
}

static trace_packer unpacker; /* all zeros: trace_events_unpack's */

static memtap_record rec(uint64_t seq, uint8_t kind)
{
    memtap_record r;
    memset(&r, 0, sizeof r);
    r.seq = seq;
    r.kind = kind;
    r.pc = 0x1000 + seq;
    r.addr = 0x7f0000000000ull + seq * 16;
    r.size = seq % 64;
    r.addr2 = seq * 3;
    r.aux = seq / 2;
    r.count = 1;
    return r;
}

static const memtap_segment segs[2] = { { 0, 0x2000, 5, 0 },
                                        { 0x3000, 0x100, 6, 0 } };
static const uint8_t bid[20] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
                                 11, 12, 13, 14, 15, 16, 17, 18, 19, 20 };

/* Writes events 0..n-1 spread over three threads in runs of `run`, so the
 * reader must merge chunks back into sequence order. */
static void write_sample(const char *path, uint64_t n, uint64_t run)
{
    trace_writer *w;
    CHECK(trace_writer_create(path, 1234, &w) == MEMTAP_OK);
    CHECK(trace_writer_info(w, "pid=1234\nexe=/bin/sample\n") == MEMTAP_OK);
    CHECK(trace_writer_maps(w, "00400000-00401000 r-xp 0 0:0 0 /bin/x\n") ==
          MEMTAP_OK);
    memtap_module m = { 0, MEMTAP_MODF_MAIN, 0, 0x400000, "/bin/sample",
                        bid, sizeof bid, segs, 2 };
    CHECK(trace_writer_module(w, &m) == MEMTAP_OK);
    /* thread t gets seqs where (seq / run) % 3 == t; written thread by
     * thread, so chunks of different threads interleave out of order */
    for (uint32_t t = 0; t < 3; t++)
        for (uint64_t s = 0; s < n; s++)
            if ((s / run) % 3 == t) {
                memtap_record r = rec(s, s % 2 ? 'L' : 'S');
                CHECK(trace_writer_event(w, 100 + t, &r) == MEMTAP_OK);
                if (s % run == run - 1)
                    CHECK(trace_writer_flush(w) == MEMTAP_OK);
            }
    CHECK(trace_writer_close(w) == MEMTAP_OK);
}

/* Checks one event read back: after `last` (the n-th), as written. */
static void check_event(const memtap_record *r, uint32_t tid, uint64_t n,
                        uint64_t last, int expect_contiguous, uint64_t run)
{
    if (n)
        CHECK(r->seq > last);
    if (expect_contiguous)
        CHECK_EQ_U64(r->seq, n);
    memtap_record want = rec(r->seq, r->seq % 2 ? 'L' : 'S');
    CHECK(memcmp(r, &want, sizeof want) == 0);
    CHECK_EQ_U64(tid, 100 + (r->seq / run) % 3);
}

/* Reads every event, one at a time (runs == 0) or in runs of at most
 * `runs`; checks order and content; returns the count. */
static uint64_t read_all_by(const char *path, int expect_contiguous,
                            uint64_t run, size_t runs)
{
    memtap_trace *t;
    if (memtap_trace_open(path, &t) != MEMTAP_OK)
        return UINT64_MAX;
    memtap_event ev;
    const memtap_record *recs;
    uint32_t tid;
    uint64_t n = 0, last = 0;
    int rc;
    while ((rc = runs ? memtap_trace_next_run(t, &recs, &tid, runs)
                      : memtap_trace_next(t, &ev)) > 0) {
        if (!runs) {
            recs = &ev.rec;
            tid = ev.tid;
        }
        CHECK((size_t)rc <= (runs ? runs : 1));
        for (int i = 0; i < rc; i++, n++) {
            check_event(&recs[i], tid, n, last, expect_contiguous, run);
            last = recs[i].seq;
        }
    }
    CHECK(rc == 0);
    memtap_trace_close(t);
    return n;
}

/* The same checks through trace/walk.h (read ahead when this machine
 * has a second CPU); the count. */
static uint64_t read_all_walked(const char *path, int expect_contiguous,
                                uint64_t run)
{
    memtap_trace *t;
    if (memtap_trace_open(path, &t) != MEMTAP_OK)
        return UINT64_MAX;
    trace_walk *w = trace_walk_open(t);
    CHECK(w != NULL);
    const memtap_record *recs;
    uint32_t tid;
    uint64_t n = 0, last = 0;
    int rc;
    while ((rc = trace_walk_next(w, &recs, &tid)) > 0)
        for (int i = 0; i < rc; i++, n++) {
            check_event(&recs[i], tid, n, last, expect_contiguous, run);
            last = recs[i].seq;
        }
    CHECK(rc == 0 && trace_walk_next(w, &recs, &tid) == 0);
    trace_walk_close(w);
    memtap_trace_close(t);
    return n;
}

/* read_all_by one at a time, in runs and walked (which must give the
 * same). */
static uint64_t read_all(const char *path, int expect_contiguous,
                         uint64_t run)
{
    uint64_t n = read_all_by(path, expect_contiguous, run, 0);
    CHECK_EQ_U64(read_all_by(path, expect_contiguous, run, 1000), n);
    CHECK_EQ_U64(read_all_by(path, expect_contiguous, run, 1), n);
    CHECK_EQ_U64(read_all_walked(path, expect_contiguous, run), n);
    return n;
}

static void test_round_trip(void)
{
    const char *p = path_in_dir("rt.mtr");
    write_sample(p, 20000, 3000);
    CHECK_EQ_U64(read_all(p, 1, 3000), 20000);

    memtap_trace *t;
    CHECK(memtap_trace_open(p, &t) == MEMTAP_OK);
    const memtap_trace_health *h = memtap_trace_get_health(t);
    CHECK_EQ_U64(h->events, 20000);
    CHECK(!h->truncated && !h->corrupt_chunks);
    CHECK_EQ_U64(memtap_trace_header(t)->pid, 1234);
    CHECK_EQ_U64(memtap_trace_module_count(t), 1);
    const memtap_module *m = memtap_trace_module_at(t, 0);
    CHECK_STREQ(m->path, "/bin/sample");
    CHECK_EQ_U64(m->base, 0x400000);
    CHECK_EQ_U64(m->nsegs, 2);
    CHECK_EQ_U64(m->segs[1].vaddr, 0x3000);
    CHECK(m->build_id_len == 20 && memcmp(m->build_id, bid, 20) == 0);
    /* a value is a string of its own, the same one when asked again */
    CHECK_STREQ(memtap_trace_info(t, "exe"), "/bin/sample");
    CHECK(memtap_trace_info(t, "exe") == memtap_trace_info(t, "exe"));
    CHECK(memtap_trace_info(t, "missing") == NULL);
    CHECK(strstr(memtap_trace_maps(t), "/bin/x") != NULL);
    /* rewinding replays the same events */
    memtap_event ev;
    CHECK(memtap_trace_next(t, &ev) == 1 && ev.rec.seq == 0);
    CHECK(memtap_trace_rewind(t) == MEMTAP_OK);
    CHECK(memtap_trace_next(t, &ev) == 1 && ev.rec.seq == 0);
    /* runs and single events mixed: the run ends where thread 100's first
     * chunk does (its next events are thread 101's) */
    const memtap_record *recs;
    uint32_t tid;
    CHECK(memtap_trace_next_run(t, &recs, &tid, 100000) == 2999);
    CHECK(tid == 100 && recs[0].seq == 1 && recs[2998].seq == 2999);
    CHECK(memtap_trace_next(t, &ev) == 1 && ev.rec.seq == 3000 &&
          ev.tid == 101);
    CHECK(memtap_trace_next_run(t, &recs, &tid, 10) == 10);
    CHECK(tid == 101 && recs[0].seq == 3001);
    /* a walk ended before the trace's end (its reader thread stopped) */
    CHECK(memtap_trace_rewind(t) == MEMTAP_OK);
    trace_walk *w = trace_walk_open(t);
    CHECK(w && trace_walk_next(w, &recs, &tid) > 0 && recs[0].seq == 0);
    trace_walk_close(w);
    memtap_trace_close(t);
}

static void *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    rewind(f);
    void *buf = malloc(*len);
    if (buf && fread(buf, 1, *len, f) != *len) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    return buf;
}

static void spill(const char *path, const void *buf, size_t len)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (f) {
        CHECK(fwrite(buf, 1, len, f) == len);
        fclose(f);
    }
}

/* Offsets where chunks end, found by walking the headers independently. */
static size_t chunk_ends(const char *buf, size_t len, size_t *ends,
                         uint32_t *counts, size_t max)
{
    size_t off = sizeof(memtap_file_header), n = 0;
    while (off + sizeof(memtap_chunk_header) <= len && n < max) {
        memtap_chunk_header h;
        memcpy(&h, buf + off, sizeof h);
        off += sizeof h + h.stored_size;
        counts[n] = h.type == MEMTAP_CHUNK_EVENTS || h.type == MEMTAP_CHUNK_PACKED
                        ? h.count
                        : 0;
        ends[n++] = off;
    }
    return n;
}

static void test_truncation(void)
{
    const char *full = path_in_dir("full.mtr"), *cut = path_in_dir("cut.mtr");
    write_sample(full, 600, 100);
    size_t len;
    char *buf = slurp(full, &len);
    CHECK(buf != NULL);
    if (!buf)
        return;
    size_t ends[64];
    uint32_t counts[64];
    size_t nchunks = chunk_ends(buf, len, ends, counts, 64);
    CHECK(nchunks == 9 && ends[nchunks - 1] == len);
    for (size_t l = 0; l <= len; l++) {
        spill(cut, buf, l);
        memtap_trace *t;
        int rc = memtap_trace_open(cut, &t);
        if (l < sizeof(memtap_file_header)) {
            CHECK(rc == MEMTAP_E_FORMAT);
            continue;
        }
        CHECK(rc == MEMTAP_OK);
        if (rc != MEMTAP_OK)
            continue;
        /* expected: the events of the chunks that end within l */
        uint64_t want = 0;
        int boundary = l == sizeof(memtap_file_header);
        for (size_t i = 0; i < nchunks; i++) {
            if (ends[i] <= l)
                want += counts[i];
            if (ends[i] == l)
                boundary = 1;
        }
        CHECK_EQ_U64(memtap_trace_get_health(t)->truncated, !boundary);
        memtap_trace_close(t);
        CHECK_EQ_U64(read_all(cut, 0, 100), want);
    }
    free(buf);
}

/* A followed trace: a writer (the callback, which the reader asks after
 * each chunk and while it waits) adds the bytes of a whole trace `step`
 * at a time, chunks cut anywhere, until it has `upto` of them. */
typedef struct grower {
    const char *path;
    const char *buf;
    size_t len, upto, at, step;
} grower;

static int grow_more(void *arg, uint64_t read)
{
    grower *g = arg;
    CHECK(read <= g->at);
    if (g->at == g->upto)
        return 0;
    size_t n = g->upto - g->at < g->step ? g->upto - g->at : g->step;
    FILE *f = fopen(g->path, "ab");
    CHECK(f && fwrite(g->buf + g->at, 1, n, f) == n);
    if (f)
        fclose(f);
    g->at += n;
    return 1;
}

/* The records of a followed trace come chunk by chunk in the order the
 * file has them (write_sample writes its threads one after another), the
 * module as it came; a writer that stops inside a chunk leaves the trace
 * truncated, the whole chunks read. */
static void test_follow(void)
{
    const char *full = path_in_dir("follow-full.mtr"), *grown = path_in_dir("grown.mtr");
    write_sample(full, 600, 100);
    size_t len, ends[64];
    uint32_t counts[64];
    char *buf = slurp(full, &len);
    CHECK(buf != NULL);
    if (!buf)
        return;
    size_t nchunks = chunk_ends(buf, len, ends, counts, 64);
    for (int cut = 0; cut < 2; cut++) {
        spill(grown, buf, 0);
        grower g = { grown, buf, len, cut ? ends[nchunks - 1] - 5 : len, 0, 97 };
        memtap_trace *t;
        CHECK(trace_follow_open(grown, grow_more, &g, 0, &t) == MEMTAP_OK);
        if (!t)
            continue;
        const memtap_record *recs;
        uint32_t tid;
        uint64_t n = 0, wrong = 0;
        int k;
        while ((k = memtap_trace_next_run(t, &recs, &tid, 64)) > 0)
            for (int i = 0; i < k; i++, n++) {
                /* thread by thread: the n-th record of the file */
                uint32_t th = (uint32_t)(n / 200);
                uint64_t j = n % 200, seq = (j / 100 * 3 + th) * 100 + j % 100;
                wrong += recs[i].seq != seq || tid != 100 + th;
            }
        CHECK_EQ_U64(k, 0);
        CHECK_EQ_U64(wrong, 0);
        CHECK_EQ_U64(n, cut ? 600 - counts[nchunks - 1] : 600);
        CHECK_EQ_U64(memtap_trace_get_health(t)->truncated, cut);
        CHECK_EQ_U64(memtap_trace_module_count(t), 1);
        CHECK(memtap_trace_module_count(t) &&
              strcmp(memtap_trace_module_at(t, 0)->path, "/bin/sample") == 0);
        CHECK(memtap_trace_rewind(t) == MEMTAP_E_INVALID);
        memtap_trace_close(t);
    }
    /* the tables alone, grown by trace_follow_update: the file header
     * first, then the rest (the module among it), no events */
    spill(grown, buf, sizeof(memtap_file_header));
    grower done = { grown, buf, len, 0, 0, 97 };
    memtap_trace *t;
    CHECK(trace_follow_open(grown, grow_more, &done, TRACE_FOLLOW_META, &t) == MEMTAP_OK);
    if (t) {
        CHECK_EQ_U64(memtap_trace_module_count(t), 0);
        CHECK_EQ_U64(trace_follow_update(t), 0);
        FILE *f = fopen(grown, "ab");
        CHECK(f && fwrite(buf + sizeof(memtap_file_header), 1,
                          len - sizeof(memtap_file_header), f) ==
                       len - sizeof(memtap_file_header));
        if (f)
            fclose(f);
        CHECK_EQ_U64(trace_follow_update(t), 1);
        CHECK_EQ_U64(memtap_trace_module_count(t), 1);
        CHECK_EQ_U64(memtap_trace_get_health(t)->events, 0);
        memtap_trace_close(t);
    }
    /* no trace file ever came */
    grower none = { path_in_dir("never.mtr"), buf, len, 0, 0, 97 };
    CHECK(trace_follow_open(none.path, grow_more, &none, 0, &t) == MEMTAP_E_IO && !t);
    free(buf);
}

/* Chunk times: a trace from before them has none; times written across
 * 2^32 microseconds (71 minutes) are unwrapped; a run's time is its share
 * of its chunk's, which starts where its thread's chunk before it closed,
 * or for a thread's first chunk where the file's chunk before it did. */
static void test_chunk_times(void)
{
    const char *path = path_in_dir("times.mtr");
    write_sample(path, 600, 100);
    memtap_trace *t;
    CHECK(memtap_trace_open(path, &t) == MEMTAP_OK);
    CHECK_EQ_U64(memtap_trace_duration_us(t), 0);
    const memtap_record *recs;
    uint32_t tid;
    uint64_t from, to;
    CHECK(memtap_trace_next_run(t, &recs, &tid, 1000) > 0);
    CHECK(memtap_trace_run_time(t, &from, &to) == 0);
    memtap_trace_close(t);

    /* the six event chunks, in file order: thread 100's (seq 0-99 and
     * 300-399), 101's, 102's; time k at 0xffffff00 + k * 0x80 us */
    size_t len;
    char *buf = slurp(path, &len);
    CHECK(buf != NULL);
    if (!buf)
        return;
    uint64_t at[6];
    size_t k = 0;
    for (size_t off = sizeof(memtap_file_header); off + sizeof(memtap_chunk_header) <= len;) {
        memtap_chunk_header h;
        memcpy(&h, buf + off, sizeof h);
        if (h.type == MEMTAP_CHUNK_PACKED && k < 6) {
            at[k] = 0xffffff00ull + k * 0x80;
            trace_chunk_set_time(buf + off, (uint32_t)(at[k] + 1));
            k++;
        }
        off += sizeof h + h.stored_size;
    }
    CHECK_EQ_U64(k, 6);
    spill(path, buf, len);
    free(buf);
    CHECK(memtap_trace_open(path, &t) == MEMTAP_OK);
    CHECK_EQ_U64(memtap_trace_duration_us(t), at[5]);
    /* runs of 100 in sequence order: seq 0-99 is chunk 0 (from the start),
     * 100-199 chunk 2 (thread 101's first: from chunk 1's close), 200-299
     * chunk 4, 300-399 chunk 1 (from chunk 0's), 400-499 chunk 3, 500-599
     * chunk 5; its records spread evenly, the last at the close */
    static const int chunk_of[6] = { 0, 2, 4, 1, 3, 5 };
    static const int from_chunk[6] = { -1, 1, 3, 0, 2, 4 };
    for (int r = 0; r < 6; r++) {
        int n = memtap_trace_next_run(t, &recs, &tid, 100);
        CHECK_EQ_U64(n, 100);
        CHECK(memtap_trace_run_time(t, &from, &to) == 1);
        uint64_t begin = from_chunk[r] < 0 ? 0 : at[from_chunk[r]];
        CHECK_EQ_U64(to, at[chunk_of[r]]);
        CHECK_EQ_U64(from, begin + (at[chunk_of[r]] - begin) / 100);
    }
    /* half a chunk: half its time; the same times however a chunk's
     * records are cut into runs */
    CHECK(memtap_trace_rewind(t) == MEMTAP_OK);
    CHECK(memtap_trace_next_run(t, &recs, &tid, 50) == 50);
    CHECK(memtap_trace_run_time(t, &from, &to) == 1);
    CHECK_EQ_U64(from, at[0] / 100);
    CHECK_EQ_U64(to, at[0] / 2);
    CHECK(memtap_trace_next_run(t, &recs, &tid, 7) == 7);
    CHECK(memtap_trace_run_time(t, &from, &to) == 1);
    CHECK_EQ_U64(from, at[0] * 51 / 100);
    CHECK_EQ_U64(to, at[0] * 57 / 100);
    memtap_trace_close(t);
}

static void test_corruption(void)
{
    const char *full = path_in_dir("c.mtr"), *bad = path_in_dir("bad.mtr");
    write_sample(full, 600, 100);
    size_t len;
    char *buf = slurp(full, &len);
    if (!buf)
        return;
    size_t ends[64];
    uint32_t counts[64];
    size_t n = chunk_ends(buf, len, ends, counts, 64);
    /* chunk 4 (an event chunk): damage its payload */
    char *copy = malloc(len);
    memcpy(copy, buf, len);
    copy[ends[3] + sizeof(memtap_chunk_header) + 10] ^= 0x55;
    spill(bad, copy, len);
    CHECK_EQ_U64(read_all(bad, 0, 100), 600 - counts[4]);
    /* damage chunk 5's header: the reader resynchronizes at chunk 6 */
    memcpy(copy, buf, len);
    copy[ends[4] + 9] ^= 0x01;
    spill(bad, copy, len);
    memtap_trace *t;
    CHECK(memtap_trace_open(bad, &t) == MEMTAP_OK);
    CHECK_EQ_U64(memtap_trace_get_health(t)->corrupt_chunks, 1);
    CHECK_EQ_U64(memtap_trace_get_health(t)->skipped_bytes,
                 ends[5] - ends[4]);
    memtap_trace_close(t);
    CHECK_EQ_U64(read_all(bad, 0, 100), 600 - counts[5]);
    /* garbage inserted between chunks is skipped */
    char *grown = malloc(len + 100);
    memcpy(grown, buf, ends[2]);
    memset(grown + ends[2], 'M', 100);
    memcpy(grown + ends[2] + 100, buf + ends[2], len - ends[2]);
    spill(bad, grown, len + 100);
    CHECK_EQ_U64(read_all(bad, 0, 100), 600);
    /* an event chunk written twice: its events are read once */
    size_t dup = ends[4] - ends[3];
    char *twice = malloc(len + dup);
    memcpy(twice, buf, ends[5]);
    memcpy(twice + ends[5], buf + ends[3], dup);
    memcpy(twice + ends[5] + dup, buf + ends[5], len - ends[5]);
    spill(bad, twice, len + dup);
    CHECK_EQ_U64(read_all(bad, 1, 100), 600);
    CHECK(memtap_trace_open(bad, &t) == MEMTAP_OK);
    const memtap_record *recs;
    uint32_t tid;
    while (memtap_trace_next_run(t, &recs, &tid, 64) > 0)
        continue;
    CHECK_EQ_U64(memtap_trace_get_health(t)->duplicates, counts[4]);
    memtap_trace_close(t);
    free(twice);
    (void)n;
    free(grown);
    free(copy);
    free(buf);
}

static void test_bad_files(void)
{
    memtap_trace *t = NULL;
    const char *p = path_in_dir("junk.mtr");
    spill(p, "this is not a memtap trace, just some text........", 50);
    CHECK(memtap_trace_open(p, &t) == MEMTAP_E_FORMAT && t == NULL);
    spill(p, "", 0);
    CHECK(memtap_trace_open(p, &t) == MEMTAP_E_FORMAT);
    CHECK(memtap_trace_open(path_in_dir("absent.mtr"), &t) == MEMTAP_E_IO &&
          errno == ENOENT);
    CHECK(memtap_trace_open(dir, &t) == MEMTAP_E_FORMAT);
    /* a newer version is refused, not misread */
    write_sample(p, 10, 10);
    size_t len;
    char *buf = slurp(p, &len);
    memtap_file_header h;
    memcpy(&h, buf, sizeof h);
    h.version = 99;
    memcpy(buf, &h, sizeof h);
    spill(p, buf, len);
    CHECK(memtap_trace_open(p, &t) == MEMTAP_E_VERSION);
    free(buf);
    CHECK_STREQ(memtap_status_string(MEMTAP_E_VERSION),
                "unsupported trace version");
}

/* Packed records: every field survives, extremes included; damaged or
 * short packings are refused. */
static void test_packing(void)
{
    memtap_record r[6];
    memset(r, 0, sizeof r);
    for (int i = 0; i < 6; i++)
        r[i] = rec((uint64_t)i * 7, (uint8_t)"LSMYRk"[i]);
    r[1].pc = 0;                      /* deltas both ways, full width */
    r[2].addr = UINT64_MAX;
    r[2].addr2 = 1;
    r[3].seq = UINT64_MAX;
    r[3].size = UINT64_MAX;
    r[3].count = UINT32_MAX;
    r[4].flags = 0xff;
    r[4].reserved = 0xffff;
    r[4].aux = UINT64_MAX;
    r[5].count = 0;
    uint8_t packed[6 * TRACE_PACKED_MAX];
    size_t len = trace_events_pack(r, 6, packed);
    CHECK(len > 0 && len <= sizeof packed);
    memtap_record back[6];
    int ordered = 1;
    CHECK(trace_events_unpack(&unpacker, packed, len, back, 6, NULL, &ordered) == 0);
    CHECK(memcmp(back, r, sizeof r) == 0);
    CHECK(!ordered); /* r[4] after r[3]'s largest seq */
    /* short, one record too many, one missing */
    CHECK(trace_events_unpack(&unpacker, packed, len - 1, back, 6, NULL, NULL) != 0);
    CHECK(trace_events_unpack(&unpacker, packed, len, back, 5, NULL, NULL) != 0);
    CHECK(trace_events_unpack(&unpacker, packed, len, back, 7, NULL, NULL) != 0);
    uint8_t bad[3] = { 'L', 0x80, 0xff };                      /* bad flags */
    CHECK(trace_events_unpack(&unpacker, bad, sizeof bad, back, 1, NULL, NULL) != 0);
}

/* Two modules' sites: tag 0 a load leading two elided sites (a store
 * standing for 2 accesses at +8, a read-modify-write at -16), a
 * read-modify-write, a site of no access, an elided site; tag 1 a byte
 * load. */
#define SITE(pc, count, size, r, w, delta, followers, elided) \
    { pc, count, size, r, w, delta, followers, elided, 0 }
static const memtap_site sites0[6] = { SITE(0x100, 1, 8, 1, 0, 0, 2, 0),
                                       SITE(0x104, 2, 4, 0, 1, 8, 0, 1),
                                       SITE(0x108, 1, 8, 1, 1, -16, 0, 1),
                                       SITE(0x10c, 1, 8, 1, 1, 0, 0, 0),
                                       SITE(0x110, 1, 8, 0, 0, 0, 0, 0),
                                       SITE(0x114, 1, 8, 1, 0, 4, 0, 1) };
static const memtap_site sites1[1] = { SITE(0x20, 1, 1, 1, 0, 0, 0, 0) };
static const trace_site_table tabs[2] = { { 0x400000, sites0, 6, NULL },
                                          { 0x7f0000, sites1, 1, NULL } };

static size_t expand_one(const memtap_site *s, uint64_t bias, uint64_t addr,
                         uint64_t *seq, memtap_record *out)
{
    size_t n = 0;
    for (int w = 0; w < 2; w++) {
        if (!(w ? s->write : s->read))
            continue;
        memtap_record *r = &out[n++];
        memset(r, 0, sizeof *r);
        r->seq = (*seq)++;
        r->kind = w ? 'S' : 'L';
        r->pc = bias + s->pc;
        r->addr = addr;
        r->size = s->size;
        r->count = s->count;
    }
    return n;
}

/* What an entry stands for, by the format's rules; returns the records. */
static size_t expand(const trace_entry *e, uint64_t *seq, memtap_record *out)
{
    uint32_t tag = e->site >> MEMTAP_SITE_BITS, i = e->site & 0xffffff;
    if (tag > 1 || i >= tabs[tag].nsites)
        return 0;
    const memtap_site *s = &tabs[tag].sites[i];
    if (s->elided)
        return 0;
    uint64_t bias = tabs[tag].bias;
    size_t n = expand_one(s, bias, e->addr, seq, out);
    for (uint32_t f = 1; f <= s->followers; f++)
        n += expand_one(&s[f], bias, e->addr + (uint64_t)(int64_t)s[f].delta,
                        seq, out + n);
    return n;
}

/* Access runs between records: every entry of a known site comes back as
 * its records in order, elided followers after their leader's, through
 * several runs when room or the record cap cuts them; entries of no site,
 * of a site of no access or of an elided site are left out; strided sites
 * take two bytes an entry, one once each predicts the other; runs need
 * the tables. */
/* trace_keep's more(): addresses below 0x700000 kept, a span each side;
 * counts its calls. */
static unsigned keep_calls;
static int keep_below(trace_keep *k, uint64_t addr)
{
    keep_calls++;
    k->lo[1] = k->lo[0], k->len[1] = k->len[0], k->keep[1] = k->keep[0];
    k->keep[0] = addr < 0x700000;
    k->lo[0] = k->keep[0] ? 0 : 0x700000;
    k->len[0] = k->keep[0] ? 0x700000 : UINT64_MAX - 0x700000;
    return k->keep[0];
}

static void test_access_runs(void)
{
    enum { N = 3000 };
    static trace_entry e[N];
    static memtap_record want[4 * N + 2], back[4 * N + 2];
    static uint8_t packed[16 * N + 4 * TRACE_PACKED_MAX];
    uint64_t x = 12345;
    for (size_t i = 0; i < N; i++) {
        static const uint32_t site[7] = { 0, 4, 3, 1u << 24, 5, 9, 1 };
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        e[i].site = site[i % 7];
        e[i].addr = i % 7 == 2 ? x : 0x601000 + (i / 7) * 8 + (i % 7) * 4096;
    }
    trace_sites ts = { tabs, 2 };
    trace_packer pk;
    trace_packer_init(&pk);
    uint64_t seq = 7;
    size_t nwant = 0;
    want[nwant] = rec(seq++, 'M');
    uint8_t *o = trace_pack_record(&pk, &want[nwant++], packed);
    const trace_entry *at = e, *end = e + N;
    int runs = 0;
    while (at < end) { /* small limits: several runs */
        uint32_t records = 0;
        const trace_entry *from = at;
        uint8_t *r = trace_run_pack(&pk, &ts, &at, end, o, o + 4000, 1500,
                                    &records);
        CHECK(r != o && records <= 1500);
        uint64_t first = seq + 3; /* another thread took three */
        seq = first;
        for (; from < at; from++)
            nwant += expand(from, &seq, &want[nwant]);
        CHECK_EQ_U64(seq - first, records);
        trace_run_seal(&pk, o, first, records);
        o = r;
        runs++;
    }
    CHECK(runs >= 3);
    want[nwant] = rec(seq++, 'F');
    o = trace_pack_record(&pk, &want[nwant++], o);
    size_t len = (size_t)(o - packed);
    int ordered = 0;
    CHECK(trace_events_unpack(&unpacker, packed, len, back, nwant, &ts, &ordered) == 0);
    CHECK(memcmp(back, want, nwant * sizeof *want) == 0 && ordered);
    CHECK(trace_events_unpack(&unpacker, packed, len, back, nwant, NULL, NULL) != 0);
    trace_sites one = { tabs, 1 };                          /* no tag 1 */
    CHECK(trace_events_unpack(&unpacker, packed, len, back, nwant, &one, NULL) != 0);
    CHECK(trace_events_unpack(&unpacker, packed, len - 1, back, nwant, &ts, NULL) != 0);
    CHECK(trace_events_unpack(&unpacker, packed, len, back, nwant - 1, &ts, NULL) != 0);

    /* the writer's per-site record counts pack the same bytes */
    uint8_t rec0[6], rec1[1];
    trace_site_records_fill(&ts, 0, rec0);
    trace_site_records_fill(&ts, 1, rec1);
    static const uint8_t want0[6] = { 4, 0, 0, 2, 0, 0 };
    CHECK(memcmp(rec0, want0, 6) == 0 && rec1[0] == 1);
    trace_site_table fast[2] = { tabs[0], tabs[1] };
    fast[0].records = rec0;
    fast[1].records = rec1;
    trace_sites fs = { fast, 2 };
    static uint8_t again[sizeof packed];
    trace_packer a, b;
    trace_packer_init(&a);
    trace_packer_init(&b);
    const trace_entry *ea = e, *eb = e;
    uint32_t ra = 0, rb = 0;
    uint8_t *oa = trace_run_pack(&a, &ts, &ea, e + N, packed, packed + sizeof packed,
                                 UINT32_MAX, &ra);
    uint8_t *ob = trace_run_pack(&b, &fs, &eb, e + N, again, again + sizeof again,
                                 UINT32_MAX, &rb);
    trace_run_seal(&a, packed, 1, ra);
    trace_run_seal(&b, again, 1, rb);
    CHECK(ra == rb && oa - packed == ob - again &&
          memcmp(packed, again, (size_t)(oa - packed)) == 0);

    /* two sites striding by 8: about two bytes an entry */
    for (size_t i = 0; i < 1000; i++) {
        e[i].site = (uint32_t)(i % 2 ? 3 : 0);
        e[i].addr = 0x601000 + (i / 2) * 8 + (i % 2) * 65536;
    }
    trace_packer_reset(&pk);
    at = e;
    uint32_t records = 0;
    o = trace_run_pack(&pk, &ts, &at, e + 1000, packed, packed + sizeof packed,
                       UINT32_MAX, &records);
    CHECK(at == e + 1000 && records == 500 * 4 + 500 * 2);
    CHECK((size_t)(o - packed) <= 2 * 1000 + TRACE_RUN_FRAME);
    /* ...and once each site predicts the other, one byte an entry (the
     * first two entries take up to ten bytes) */
    CHECK((size_t)(o - packed) <= 1000 + TRACE_RUN_FRAME + 2 * 10);

    /* filtered as packed (trace_run_pack_kept): every third entry's
     * address lies outside the kept memory; the run is byte for byte the
     * run of the kept entries packed alone */
    static trace_entry kept[1000];
    size_t nkept = 0;
    for (size_t i = 0; i < 1000; i++) {
        if (i % 3 == 2)
            e[i].addr += 0x200000;
        else
            kept[nkept++] = e[i];
    }
    trace_keep below = { { 0, 0 }, { 0, 0 }, { 1, 1 }, keep_below, NULL };
    trace_packer_reset(&pk);
    at = e;
    records = 0;
    o = trace_run_pack_kept(&pk, &ts, &at, e + 1000, packed, packed + sizeof packed,
                            UINT32_MAX, &records, &below);
    trace_run_seal(&pk, packed, 1, records);
    trace_packer_reset(&a);
    const trace_entry *ak = kept;
    uint32_t rkept = 0;
    oa = trace_run_pack(&a, &ts, &ak, kept + nkept, again, again + sizeof again,
                        UINT32_MAX, &rkept);
    trace_run_seal(&a, again, 1, rkept);
    uint32_t kept_records = 0;
    for (size_t i = 0; i < nkept; i++)
        kept_records += kept[i].site == 0 ? 4 : 2;
    /* the two spans, once each: the rest answered by the two kept */
    CHECK(at == e + 1000 && ak == kept + nkept && nkept == 667 && keep_calls == 2);
    CHECK(records == kept_records && rkept == kept_records);
    CHECK(o - packed == oa - again && memcmp(packed, again, (size_t)(o - packed)) == 0);
    /* none kept: no run, every entry passed */
    trace_keep none = { { 0, 0 }, { UINT64_MAX, 0 }, { 0, 1 }, keep_below, NULL };
    at = e;
    records = 0;
    CHECK(trace_run_pack_kept(&pk, &ts, &at, e + 1000, packed, packed + sizeof packed,
                              UINT32_MAX, &records, &none) == packed &&
          at == e + 1000 && records == 0);
}

/* Whether the run at bytes reads back as the records of its three entries
 * e, numbered from 5, nrecords of them. */
static int run_reads_back(const uint8_t *bytes, size_t len,
                          const trace_entry *e, size_t nrecords)
{
    trace_sites ts = { tabs, 2 };
    memtap_record want[8], back[8];
    uint64_t seq = 5;
    size_t n = 0;
    for (int i = 0; i < 3; i++)
        n += expand(&e[i], &seq, &want[n]);
    return n == nrecords &&
           trace_events_unpack(&unpacker, bytes, len, back, n, &ts, NULL) == 0 &&
           memcmp(back, want, n * sizeof *want) == 0;
}

/* Runs in both entry forms by trace.h's rules, encoded by hand: site 3
 * (a load and a store of 8 bytes) at 0x601000, 0x601008, then format 4
 * and 5's third access at 0x601010 and format 3's tag 1 site 0 at 0x20.
 * Slots: site 0 -> 0, site 3 -> 874, site 1 << 24 -> 708 of 1024 (format
 * 5: 0, 6996, 5664 of 8192; no two sites share one in either). */
static void test_run_forms(void)
{
    static const uint8_t next_form[] = {
        MEMTAP_RUN_MARK_NEXT, 3, 0, 0, 0,
        5, 0, 0, 0, 0, 0, 0, 0,         /* first seq 5 */
        0x0c, 0x80, 0xc0, 0x80, 0x06,   /* no guess: zigzag(3) << 1, d */
        0x0c, 0x10,                     /* guess 0: zigzag(3) << 1, d 16 */
        0x21                            /* guessed: 16 << 1 | 1 */
    };
    static const uint8_t first_form[] = {
        MEMTAP_RUN_MARK, 3, 0, 0, 0,
        0x06, 0x80, 0xc0, 0x80, 0x06,   /* zigzag(3), zigzag(0x601000) */
        0x00, 0x10,                     /* same site, d 16 */
        0xfa, 0xff, 0xff, 0x0f, 0x40,   /* zigzag(1 << 24 - 3), 0x20 */
        0x0a                            /* first seq: zigzag(5 - 0) */
    };
    const trace_entry e4[3] = { { 3, 0, 0x601000 }, { 3, 0, 0x601008 },
                                { 3, 0, 0x601010 } };
    const trace_entry e3[3] = { { 3, 0, 0x601000 }, { 3, 0, 0x601008 },
                                { 1u << 24, 0, 0x20 } };
    uint8_t wide_form[sizeof next_form];
    memcpy(wide_form, next_form, sizeof next_form);
    wide_form[0] = MEMTAP_RUN_MARK_WIDE;
    CHECK(run_reads_back(wide_form, sizeof wide_form, e4, 6));
    CHECK(run_reads_back(next_form, sizeof next_form, e4, 6));
    CHECK(run_reads_back(first_form, sizeof first_form, e3, 5));

    /* the writer writes exactly format 5's bytes */
    trace_sites ts = { tabs, 2 };
    trace_packer pk;
    trace_packer_init(&pk);
    uint8_t packed[64];
    const trace_entry *at = e4;
    uint32_t records = 0;
    uint8_t *o = trace_run_pack(&pk, &ts, &at, e4 + 3, packed,
                                packed + sizeof packed, UINT32_MAX, &records);
    trace_run_seal(&pk, packed, 5, records);
    CHECK(o - packed == (ptrdiff_t)sizeof wide_form &&
          memcmp(packed, wide_form, sizeof wide_form) == 0);
}

static uint8_t *put_varint(uint8_t *o, uint64_t v)
{
    for (; v >= 0x80; v >>= 7)
        *o++ = (uint8_t)(v | 0x80);
    *o++ = (uint8_t)v;
    return o;
}

static uint64_t zigzag64(uint64_t d)
{
    return d << 1 ^ (uint64_t)((int64_t)d >> 63);
}

/* trace.h's rules for a run of formats 4 and 5, written out: entries
 * e[0..n) numbered from seq, with 2^bits slots, from fresh predictors. */
static size_t encode_run(const trace_entry *e, size_t n, uint8_t mark,
                         unsigned bits, uint64_t seq, uint8_t *out)
{
    static uint64_t last[1u << 13];
    static uint32_t next[1u << 13];
    memset(last, 0, sizeof last);
    memset(next, 0, sizeof next);
    uint8_t *o = out;
    uint32_t entries = (uint32_t)n, prev = 0;
    *o++ = mark;
    memcpy(o, &entries, 4);
    memcpy(o + 4, &seq, 8);
    o += 12;
    for (size_t i = 0; i < n; i++) {
        uint32_t site = e[i].site, *follows = &next[(prev * 0x9E3779B1u) >> (32 - bits)];
        uint32_t guess = *follows;
        *follows = prev = site;
        uint64_t *at = &last[(site * 0x9E3779B1u) >> (32 - bits)];
        uint64_t d = zigzag64(e[i].addr - *at);
        *at = e[i].addr;
        if (site == guess && d >> 63 == 0) {
            o = put_varint(o, d << 1 | 1);
        } else {
            o = put_varint(o, zigzag64((uint64_t)(int64_t)(int32_t)(site - guess)) << 1);
            o = put_varint(o, d);
        }
    }
    return (size_t)(o - out);
}

/* Format 5's 8192 slots against format 4's 1024: two sites of one slot of
 * 1024 but not of 8192, striding through two regions in turn, take a byte
 * an entry in format 5 and several in format 4; the writer writes format
 * 5's bytes as encode_run does, and both read back. */
enum { NMANY = 8192 };
static memtap_site many[NMANY]; /* loads of 8 bytes at 4 * i */

static void make_many(void)
{
    for (uint32_t i = 0; i < NMANY; i++)
        many[i] = (memtap_site)SITE(4 * i, 1, 8, 1, 0, 0, 0, 0);
}

static void test_run_slots(void)
{
    enum { NS = NMANY, N = 400 };
    make_many();
    uint32_t a = 1, b = 2;
    while ((a * 0x9E3779B1u) >> 22 != (b * 0x9E3779B1u) >> 22 ||
           (a * 0x9E3779B1u) >> 19 == (b * 0x9E3779B1u) >> 19)
        b++;
    CHECK(b < NS);
    static trace_entry e[N];
    static memtap_record want[N], back[N];
    for (uint32_t i = 0; i < N; i++) {
        e[i].site = i % 2 ? b : a;
        e[i].addr = (i % 2 ? 0x7f0000000000ull : 0x10000000ull) + 8 * (i / 2);
        memset(&want[i], 0, sizeof want[i]);
        want[i].seq = 9 + i;
        want[i].kind = 'L';
        want[i].pc = 0x1000 + 4 * e[i].site;
        want[i].addr = e[i].addr;
        want[i].size = 8;
        want[i].count = 1;
    }
    trace_site_table tab = { 0x1000, many, NS, NULL };
    trace_sites ts = { &tab, 1 };
    static uint8_t wide[16 * N], next[16 * N], packed[16 * N];
    size_t nw = encode_run(e, N, MEMTAP_RUN_MARK_WIDE, 13, 9, wide);
    size_t nn = encode_run(e, N, MEMTAP_RUN_MARK_NEXT, 10, 9, next);
    CHECK(nw <= TRACE_RUN_FRAME + N + 4 * 10 && nn >= 5 * N);
    trace_packer pk;
    trace_packer_init(&pk);
    const trace_entry *at = e;
    uint32_t records = 0;
    uint8_t *o = trace_run_pack(&pk, &ts, &at, e + N, packed,
                                packed + sizeof packed, UINT32_MAX, &records);
    trace_run_seal(&pk, packed, 9, records);
    CHECK(records == N && (size_t)(o - packed) == nw &&
          memcmp(packed, wide, nw) == 0);
    CHECK(trace_events_unpack(&unpacker, wide, nw, back, N, &ts, NULL) == 0 &&
          memcmp(back, want, sizeof want) == 0);
    memset(back, 0, sizeof back);
    CHECK(trace_events_unpack(&unpacker, next, nn, back, N, &ts, NULL) == 0 &&
          memcmp(back, want, sizeof want) == 0);
}

/* Packs e[0..n) as one run with p; its length. */
static size_t pack_all(trace_packer *p, const trace_sites *ts,
                       const trace_entry *e, size_t n, uint8_t *out,
                       size_t cap)
{
    const trace_entry *at = e;
    uint32_t records = 0;
    uint8_t *o = trace_run_pack(p, ts, &at, e + n, out, out + cap,
                                UINT32_MAX, &records);
    CHECK(at == e + n);
    trace_run_seal(p, out, 1, records);
    return (size_t)(o - out);
}

/* A chunk starts from nothing however the packer was used: reset after
 * a chunk of five sites (the slots it noted cleared) and after one of
 * 3000 (more than it notes: all cleared), it packs the same entries,
 * at other addresses, as a packer just made. */
static void test_packer_reset(void)
{
    enum { N = 3000 };
    make_many();
    trace_site_table tab = { 0x1000, many, NMANY, NULL };
    trace_sites ts = { &tab, 1 };
    static trace_entry e[N];
    static trace_packer used, fresh;
    static uint8_t a[16 * N], b[16 * N];
    for (uint32_t sites = 5; sites <= N; sites += N - 5) {
        for (uint32_t i = 0; i < N; i++) {
            e[i].site = (7 * i) % sites;
            e[i].addr = 0x500000 + 64 * i;
        }
        trace_packer_init(&fresh);
        size_t want = pack_all(&fresh, &ts, e, N, b, sizeof b);
        trace_packer_init(&used);
        for (uint32_t i = 0; i < N; i++) /* a chunk at other addresses */
            e[i].addr += 1u << 20;
        pack_all(&used, &ts, e, N, a, sizeof a);
        trace_packer_reset(&used);
        for (uint32_t i = 0; i < N; i++)
            e[i].addr -= 1u << 20;
        size_t got = pack_all(&used, &ts, e, N, a, sizeof a);
        CHECK(got == want && memcmp(a, b, want) == 0);
        CHECK(sites < N ? used.ntouched <= TRACE_TOUCHED_MAX
                        : used.ntouched > TRACE_TOUCHED_MAX);
    }
    /* and after chunks of random sites (site 0 among them, sites sharing
     * slots) at random addresses, 0 among them */
    uint64_t x = 99;
    trace_packer_reset(&used);
    for (int round = 0; round < 300; round++) {
        uint32_t nsites = 1 + (uint32_t)(round % 7) * (round % 5 ? 3 : 400);
        for (uint32_t i = 0; i < N; i++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            e[i].site = (uint32_t)(x >> 33) % nsites * (round % 3 ? 1 : 1024);
            e[i].addr = x % 11 == 0 ? 0 : (x >> 20) & 0xffffff;
        }
        uint32_t n = (uint32_t)(x >> 40) % N + 1;
        trace_packer_init(&fresh);
        size_t want = pack_all(&fresh, &ts, e, n, b, sizeof b);
        size_t got = pack_all(&used, &ts, e, n, a, sizeof a);
        trace_packer_reset(&used);
        CHECK(got == want && memcmp(a, b, want) == 0);
    }
}

/* Writes a trace of one thread: module tag 0's sites (as one compressed
 * whole, or as the tracer writes a rewritten module's: the header in a
 * frame of its own, then the rewriter's frame of the sites), then an
 * access run of entries e[0..n); returns the events read back. */
static size_t read_back_run(const char *path, int framed, const trace_entry *e,
                            size_t n, memtap_record *out, size_t cap)
{
    trace_writer *w;
    CHECK(trace_writer_create(path, 1, &w) == MEMTAP_OK);
    CHECK(trace_writer_close(w) == MEMTAP_OK);
    FILE *f = fopen(path, "ab");
    ZSTD_CCtx *cctx = ZSTD_createCCtx();
    static uint8_t raw[1u << 16], frame[1u << 16], out_chunk[1u << 17];
    memtap_sites_header h = { 0, 6, 0, 6, tabs[0].bias, 0 };
    size_t len;
    if (framed) {
        size_t z = ZSTD_compress(frame, sizeof frame, sites0, sizeof sites0, 9);
        CHECK(!ZSTD_isError(z));
        len = trace_chunk_encode_sites(cctx, 1, &h, frame, z, out_chunk,
                                       sizeof out_chunk);
    } else {
        memcpy(raw, &h, sizeof h);
        memcpy(raw + sizeof h, sites0, sizeof sites0);
        len = trace_chunk_encode(cctx, MEMTAP_CHUNK_SITES, 1, 6, raw,
                                 sizeof h + sizeof sites0, out_chunk,
                                 sizeof out_chunk);
    }
    CHECK(f && len > 0 && fwrite(out_chunk, 1, len, f) == len);
    trace_sites ts = { tabs, 1 };
    trace_packer pk;
    trace_packer_init(&pk);
    const trace_entry *at = e;
    uint32_t records = 0;
    uint8_t *o = trace_run_pack(&pk, &ts, &at, e + n, raw, raw + sizeof raw,
                                UINT32_MAX, &records);
    trace_run_seal(&pk, raw, 1, records);
    len = trace_chunk_encode(cctx, MEMTAP_CHUNK_PACKED, 1, records, raw,
                             (size_t)(o - raw), out_chunk, sizeof out_chunk);
    CHECK(at == e + n && len > 0 && fwrite(out_chunk, 1, len, f) == len);
    ZSTD_freeCCtx(cctx);
    if (f)
        fclose(f);
    memtap_trace *t;
    size_t got = 0;
    CHECK(memtap_trace_open(path, &t) == MEMTAP_OK);
    memtap_event ev;
    while (t && got < cap && memtap_trace_next(t, &ev) == 1)
        out[got++] = ev.rec;
    if (t) {
        CHECK_EQ_U64(memtap_trace_get_health(t)->corrupt_chunks, 0);
        memtap_trace_close(t);
    }
    return got;
}

/* The site table in the frames the rewriter made reads back as the table
 * compressed whole: the access run expands to the same records, the ones
 * the format's rules give. */
static void test_framed_sites(void)
{
    enum { N = 40 };
    trace_entry e[N];
    static memtap_record want[4 * N], whole[4 * N], framed[4 * N];
    uint64_t seq = 1;
    size_t nwant = 0;
    for (size_t i = 0; i < N; i++) {
        e[i].site = i % 2 ? 3 : 0;
        e[i].reserved = 0;
        e[i].addr = 0x601000 + i * 8;
        nwant += expand(&e[i], &seq, &want[nwant]);
    }
    size_t a = read_back_run(path_in_dir("whole.mtr"), 0, e, N, whole, 4 * N);
    size_t b = read_back_run(path_in_dir("framed.mtr"), 1, e, N, framed,
                             4 * N);
    CHECK_EQ_U64(a, nwant);
    CHECK_EQ_U64(b, nwant);
    CHECK(a == nwant && memcmp(whole, want, a * sizeof *want) == 0);
    CHECK(b == nwant && memcmp(framed, want, b * sizeof *want) == 0);
}

/* A chunk context sized for raw_max compresses every smaller input too
 * (zstd's tables for a small input can be larger than for a big one), at
 * every compression setting. */
static void test_workspace(void)
{
    static uint8_t in[1u << 20], out[(1u << 20) + (1u << 14)];
    uint64_t x = 1;
    for (size_t i = 0; i < sizeof in; i++) {
        x = x * 6364136223846793005ull + 1;
        in[i] = (uint8_t)((x >> 60) % 7);
    }
    for (size_t k = 0, raw_max = 1024; raw_max <= sizeof in;
         k++, raw_max *= 4) {
        trace_compression comp = (trace_compression)(k % 3); /* all three */
        size_t ws = trace_chunk_workspace_size(raw_max, comp);
        void *w = malloc(ws);
        ZSTD_CCtx *c = w ? trace_chunk_context(w, ws, comp) : NULL;
        CHECK(c != NULL && trace_chunk_bound(raw_max) <= sizeof out);
        for (size_t n = 1; c && n <= raw_max; n = n * 5 / 4 + 1)
            CHECK(trace_chunk_encode(c, MEMTAP_CHUNK_PACKED, 1, 1, in, n,
                                     out, trace_chunk_bound(raw_max)) > 0);
        free(w);
    }
}

/* Decompresses the event chunk at chunk (len bytes) into out; its raw
 * length, 0 when it is not one of raw bytes. */
static size_t chunk_payload(const uint8_t *chunk, size_t len, uint8_t *out,
                            size_t cap)
{
    memtap_chunk_header h;
    if (len < sizeof h)
        return 0;
    memcpy(&h, chunk, sizeof h);
    size_t n = ZSTD_decompress(out, cap, chunk + sizeof h, len - sizeof h);
    return ZSTD_isError(n) || n != h.raw_size ? 0 : n;
}

/* Encodes one event chunk of data (N bytes) with c as a thread whose
 * chunks' state is *st into out; its length (0 when it failed or does
 * not read back as data). */
static size_t stream_chunk(ZSTD_CCtx *c, trace_compression how,
                           trace_stream *st, const uint8_t *data, size_t n,
                           uint8_t *out, size_t cap)
{
    static uint8_t back[1 << 16];
    size_t len = trace_chunk_encode_stream(c, how, st, MEMTAP_CHUNK_PACKED, 1,
                                           (uint32_t)n, data, n, out, cap);
    return len && chunk_payload(out, len, back, sizeof back) == n &&
                   memcmp(back, data, n) == 0
               ? len
               : 0;
}

/* A thread's event chunks: stored as they are (zstd's raw blocks) after
 * one that shrank less than 2:1 (bytes Huffman coding shrinks a little
 * but no match repeats), the 16th after compressed again, and compressed
 * from then on when that one shrank 2:1; the same under fast; never
 * stored under small; every chunk reads back; the context's other chunks
 * are compressed as by a fresh context. */
static void test_stream_stored(void)
{
    enum { N = 60000 };
    static uint8_t skewed[N], regular[N], out[3][N + 4096];
    uint64_t x = 7;
    for (size_t i = 0; i < N; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        /* one byte in four random, the rest of a few small values */
        skewed[i] = (uint8_t)(i % 4 ? (x >> 60) % 5 : x >> 56);
        regular[i] = (uint8_t)(i % 16);
    }
    for (int how = TRACE_BALANCED; how <= TRACE_SMALL; how++) {
        size_t ws = trace_chunk_workspace_size(N, (trace_compression)how);
        void *w = malloc(ws), *w2 = malloc(ws);
        ZSTD_CCtx *c = w ? trace_chunk_context(w, ws, (trace_compression)how) : NULL;
        ZSTD_CCtx *fresh = w2 ? trace_chunk_context(w2, ws, (trace_compression)how)
                              : NULL;
        CHECK(c != NULL && fresh != NULL);
        trace_stream st = 0;
        size_t a = c ? stream_chunk(c, (trace_compression)how, &st, skewed, N,
                                    out[0], sizeof out[0])
                     : 0;
        /* it shrank, less than 2:1 (not at all with literals as they are) */
        CHECK(a > 0 && (how == TRACE_FAST || a < N));
        CHECK(st == (how == TRACE_SMALL ? 0 : 1));
        /* 15 stored (or compressed, under small), the 16th compressed */
        for (int k = 2; c && k <= 17; k++) {
            size_t b = stream_chunk(c, (trace_compression)how, &st, skewed, N,
                                    out[1], sizeof out[1]);
            if (how == TRACE_SMALL)
                CHECK(b == a && st == 0);
            else if (k <= 16)
                CHECK(b > N && b < N + 256 && st == k);
            else
                CHECK(b == a && st == 1);
        }
        /* the context's next chunk of another kind: as a fresh one makes it */
        size_t t = c ? trace_chunk_encode(c, MEMTAP_CHUNK_TABLE, 1, 1, skewed,
                                          N, out[1], sizeof out[1])
                     : 0;
        size_t f = fresh ? trace_chunk_encode(fresh, MEMTAP_CHUNK_TABLE, 1, 1,
                                              skewed, N, out[2], sizeof out[2])
                         : 0;
        CHECK(t > 0 && t == f && memcmp(out[1], out[2], t) == 0);
        /* compressible again: stored until the next look, then compressed */
        for (int k = 2; c && how != TRACE_SMALL && k <= 16; k++)
            CHECK(stream_chunk(c, (trace_compression)how, &st, regular, N,
                               out[0], sizeof out[0]) > N);
        size_t r = c ? stream_chunk(c, (trace_compression)how, &st, regular, N,
                                    out[0], sizeof out[0])
                     : 0;
        CHECK(r > 0 && r < N / 2 && st == 0);
        free(w);
        free(w2);
    }
}

/* SITES chunks that each claim 2^24 sites: the tables are charged to the
 * reader's memory budget, and those past it are skipped as corrupt
 * instead of making the reader allocate without bound (when the events
 * are first read: opening the trace reads no site table). */
static void test_site_table_bomb(void)
{
    const char *path = path_in_dir("sites.mtr");
    trace_writer *w;
    CHECK(trace_writer_create(path, 1, &w) == MEMTAP_OK);
    CHECK(trace_writer_close(w) == MEMTAP_OK);
    FILE *f = fopen(path, "ab");
    CHECK(f != NULL);
    ZSTD_CCtx *cctx = ZSTD_createCCtx();
    static uint8_t out[4096];
    for (uint32_t tag = 0; f && cctx && tag < 64; tag++) {
        memtap_sites_header h = { tag, 1u << MEMTAP_SITE_BITS, 0, 0, 0, 0 };
        size_t n = trace_chunk_encode(cctx, MEMTAP_CHUNK_SITES, 0, 0, &h,
                                      sizeof h, out, sizeof out);
        CHECK(n > 0 && fwrite(out, 1, n, f) == n);
    }
    ZSTD_freeCCtx(cctx);
    if (f)
        fclose(f);
    setenv("MEMTAP_READER_MEMORY", "1024", 1); /* MiB: two tables of 384 */
    memtap_trace *t;
    CHECK(memtap_trace_open(path, &t) == MEMTAP_OK);
    if (t) {
        /* the tables are read when the events are: not at open */
        CHECK_EQ_U64(memtap_trace_get_health(t)->corrupt_chunks, 0);
        memtap_event ev;
        CHECK(memtap_trace_next(t, &ev) == 0);
        CHECK_EQ_U64(memtap_trace_get_health(t)->corrupt_chunks, 62);
        memtap_trace_close(t);
    }
    unsetenv("MEMTAP_READER_MEMORY");
}

/* TABLE chunks: the stacks of every STACKS chunk found by id (one chunk
 * may hold several rows, a row may come twice), a table of a kind this
 * reader does not know passed over, a row that claims more frames than a
 * stack holds makes its chunk corrupt (the others stay). */
static size_t table_chunk(ZSTD_CCtx *cctx, uint32_t kind, uint32_t rows,
                          const void *body, size_t len, uint8_t *out, size_t cap)
{
    uint8_t raw[1024];
    memtap_table_header h = { kind, rows };
    memcpy(raw, &h, sizeof h);
    memcpy(raw + sizeof h, body, len);
    return trace_chunk_encode(cctx, MEMTAP_CHUNK_TABLE, 0, rows, raw,
                              sizeof h + len, out, cap);
}

static void test_stack_table(void)
{
    const char *path = path_in_dir("stacks.mtr");
    trace_writer *w;
    CHECK(trace_writer_create(path, 1, &w) == MEMTAP_OK);
    memtap_record r = { .seq = 0, .pc = 0x1010, .addr = 0x5000, .size = 8,
                        .kind = MEMTAP_EV_MALLOC, .count = 7 };
    CHECK(trace_writer_event(w, 1, &r) == MEMTAP_OK);
    CHECK(trace_writer_close(w) == MEMTAP_OK);
    FILE *f = fopen(path, "ab");
    ZSTD_CCtx *cctx = ZSTD_createCCtx();
    static uint8_t out[4096];
    /* ids 7 (3 frames) and 9 (1 frame) in one chunk; 7 again */
    uint32_t two[] = { 7, 3, 0x1010, 0, 0x2020, 0, 0x3030, 0, 9, 1, 0x4040, 0 };
    uint32_t again[] = { 7, 3, 0x1010, 0, 0x2020, 0, 0x3030, 0 };
    uint32_t other[] = { 5, 1, 0xdead, 0 };
    uint32_t bomb[] = { 11, MEMTAP_STACK_MAX + 1, 0, 0 };
    size_t n;
    CHECK(f && cctx);
    n = table_chunk(cctx, MEMTAP_TABLE_STACKS, 2, two, sizeof two, out, sizeof out);
    CHECK(n && fwrite(out, 1, n, f) == n);
    n = table_chunk(cctx, MEMTAP_TABLE_STACKS, 1, again, sizeof again, out, sizeof out);
    CHECK(n && fwrite(out, 1, n, f) == n);
    n = table_chunk(cctx, 99, 1, other, sizeof other, out, sizeof out);
    CHECK(n && fwrite(out, 1, n, f) == n);
    n = table_chunk(cctx, MEMTAP_TABLE_STACKS, 1, bomb, sizeof bomb, out, sizeof out);
    CHECK(n && fwrite(out, 1, n, f) == n);
    ZSTD_freeCCtx(cctx);
    fclose(f);
    memtap_trace *t;
    CHECK(memtap_trace_open(path, &t) == MEMTAP_OK);
    if (!t)
        return;
    CHECK_EQ_U64(memtap_trace_get_health(t)->corrupt_chunks, 1);
    const uint64_t *frames;
    size_t nframes;
    CHECK(memtap_trace_stack(t, 7, &frames, &nframes) == 1);
    CHECK_EQ_U64(nframes, 3);
    CHECK(nframes == 3 && frames[0] == 0x1010 && frames[2] == 0x3030);
    CHECK(memtap_trace_stack(t, 9, &frames, &nframes) == 1 && nframes == 1 &&
          frames[0] == 0x4040);
    CHECK(memtap_trace_stack(t, 5, &frames, &nframes) == 0);  /* not a stack */
    CHECK(memtap_trace_stack(t, 11, &frames, &nframes) == 0); /* corrupt */
    CHECK(memtap_trace_stack(t, 0, &frames, &nframes) == 0);
    memtap_event ev;
    CHECK(memtap_trace_next(t, &ev) == 1);
    CHECK_EQ_U64(memtap_heap_stack(&ev.rec), 7);
    memtap_trace_close(t);
}

/* Sets the version field of the trace file at path. */
static void set_version(const char *path, uint32_t version)
{
    size_t len;
    char *buf = slurp(path, &len);
    CHECK(buf != NULL);
    if (!buf)
        return;
    memcpy(buf + offsetof(memtap_file_header, version), &version,
           sizeof version);
    spill(path, buf, len);
    free(buf);
}

/* Traces of the earlier formats still read: format 1 (plain event
 * chunks) and format 2 (packed records, no access runs, no SITES). */
static void test_earlier_formats(void)
{
    const char *path = path_in_dir("v1.mtr");
    trace_writer *w;
    CHECK(trace_writer_create(path, 1, &w) == MEMTAP_OK);
    memtap_record r[50];
    for (uint64_t i = 0; i < 50; i++)
        r[i] = rec(i, i % 2 ? 'L' : 'S');
    CHECK(trace_writer_chunk(w, 100, r, 50) == MEMTAP_OK);
    CHECK(trace_writer_close(w) == MEMTAP_OK);
    set_version(path, 1);
    CHECK_EQ_U64(read_all(path, 1, 1000), 50);

    path = path_in_dir("v2.mtr");
    write_sample(path, 3000, 100);
    set_version(path, 2);
    CHECK_EQ_U64(read_all(path, 1, 100), 3000);
    set_version(path, MEMTAP_TRACE_VERSION + 1);
    memtap_trace *t;
    CHECK(memtap_trace_open(path, &t) == MEMTAP_E_VERSION);
}

/* Followers due after a later entry (memtap_site.due): a load L leading
 * a store at its address (due 0) and a store 8 bytes on (due at M, site
 * L + 3); X lies outside L's stretch, as does every site of tag 1.  Each
 * entry's records come in program order, those still due before an entry
 * outside the stretch and at the end; a run is not ended while one is
 * due, though past its record cap; trace_window_start says where a
 * stream of entries may be cut. */
static const memtap_site due_sites[5] = {
    { 0x200, 1, 8, 1, 0, 0, 2, 0, 0 }, { 0x204, 1, 8, 0, 1, 0, 0, 1, 0 },
    { 0x20c, 1, 8, 0, 1, 8, 0, 1, 3 }, { 0x208, 1, 4, 1, 0, 0, 0, 0, 0 },
    { 0x210, 1, 4, 1, 0, 0, 0, 0, 0 } };

/* "L1000 S1000 L2000 S1008": each record's kind and address (pc checked
 * against the sites) */
static void check_due_records(const memtap_record *r, size_t n,
                              const char *want)
{
    char got[256];
    size_t len = 0;
    for (size_t i = 0; i < n && len + 24 < sizeof got; i++) {
        uint64_t pc = r[i].pc - 0x400000;
        int known = 0;
        for (int k = 0; k < 5; k++)
            known |= due_sites[k].pc == pc;
        if (r[i].pc == 0x7f0020)
            known = 1;
        len += (size_t)snprintf(got + len, sizeof got - len, "%s%c%" PRIx64,
                                i ? " " : "", known ? r[i].kind : '?',
                                r[i].addr);
    }
    CHECK_STREQ(got, want);
}

static void test_due_followers(void)
{
    trace_site_table t[2] = { { 0x400000, due_sites, 5, NULL }, tabs[1] };
    trace_sites ts = { t, 2 };
    enum { L = 0, M = 3, X = 4, Y = 1u << 24 };
    const trace_entry e[] = { { L, 0, 0x1000 }, { M, 0, 0x2000 },
                              { L, 0, 0x3000 }, { X, 0, 0x4000 },
                              { L, 0, 0x5000 }, { Y, 0, 0x6000 },
                              { L, 0, 0x7000 }, { L, 0, 0x8000 },
                              { M, 0, 0x9000 }, { L, 0, 0xa000 } };
    const char *want = "L1000 S1000 L2000 S1008 " /* due at M */
                       "L3000 S3000 S3008 L4000 "  /* X: outside */
                       "L5000 S5000 S5008 L6000 "  /* another module */
                       "L7000 S7000 S7008 L8000 S8000 L9000 S8008 "
                       "La000 Sa000 Sa008";        /* at the end */
    enum { N = sizeof e / sizeof *e };
    memtap_record r[64];
    size_t n = 0;
    trace_deferred d;
    d.n = 0;
    for (size_t i = 0; i < N; i++)
        n += trace_entry_expand(&ts, &d, &e[i], &r[n]);
    n += trace_deferred_flush(&d, &r[n]);
    check_due_records(r, n, want);
    CHECK_EQ_U64(d.n, 0);

    /* packed as one run and read back (exactly n records): the same,
     * numbered in order */
    uint8_t packed[512];
    trace_packer pk;
    trace_packer_init(&pk);
    size_t len = pack_all(&pk, &ts, e, N, packed, sizeof packed);
    memtap_record back[64];
    CHECK(trace_events_unpack(&unpacker, packed, len, back, n, &ts, NULL) == 0);
    check_due_records(back, n, want);
    for (size_t i = 0; i < n; i++)
        CHECK_EQ_U64(back[i].seq, 1 + i);

    /* a run's cap of 3 records falls after L: it takes M too */
    trace_packer_init(&pk);
    const trace_entry *at = e;
    uint32_t records = 0;
    trace_run_pack(&pk, &ts, &at, e + N, packed, packed + sizeof packed, 3,
                   &records);
    CHECK(at == e + 2 && records == 4);

    /* where entries may be cut */
    CHECK_EQ_U64(trace_window_start(&ts, e, 1), 0);  /* after L */
    CHECK_EQ_U64(trace_window_start(&ts, e, 2), 2);  /* after M */
    CHECK_EQ_U64(trace_window_start(&ts, e, 3), 2);  /* after M, L */
    CHECK_EQ_U64(trace_window_start(&ts, e, 4), 4);  /* X closes it */
    CHECK_EQ_U64(trace_window_start(&ts, e, 8), 6);  /* L, L: before both */
    CHECK_EQ_U64(trace_window_start(&ts, e, 10), 9);

    /* A's follower due at B, B's before the next entry (its own group):
     * the next entry, whatever it is, or the end, comes after both */
    static const memtap_site chain[4] = {
        { 0x300, 1, 8, 1, 0, 0, 1, 0, 0 }, { 0x308, 1, 8, 0, 1, 0, 0, 1, 2 },
        { 0x304, 1, 8, 1, 0, 0, 1, 0, 0 }, { 0x30c, 1, 8, 0, 1, 0, 0, 1, 1 } };
    trace_site_table ct[1] = { { 0x400000, chain, 4, NULL } };
    trace_sites cs = { ct, 1 };
    const trace_entry ab[4] = { { 0, 0, 0x100 }, { 2, 0, 0x200 },
                                { 0, 0, 0x300 }, { 2, 0, 0x400 } };
    n = 0;
    for (size_t i = 0; i < 4; i++)
        n += trace_entry_expand(&cs, &d, &ab[i], &r[n]);
    n += trace_deferred_flush(&d, &r[n]);
    CHECK_EQ_U64(n, 8);
    for (size_t i = 0; i < n; i++) /* L100 L200 S100 S200, twice */
        CHECK(r[i].kind == (i % 4 < 2 ? 'L' : 'S') &&
              r[i].addr == (i / 4 * 2 + 1 + (i % 2)) * 0x100);
    CHECK_EQ_U64(trace_window_start(&cs, ab, 1), 0); /* A: due at B */
    CHECK_EQ_U64(trace_window_start(&cs, ab, 2), 2); /* B's: any next */
    CHECK_EQ_U64(trace_window_start(&cs, ab, 3), 2);

    /* a due site past the table is refused */
    memtap_site bad[5];
    memcpy(bad, due_sites, sizeof bad);
    bad[2].due = 5;
    t[0].sites = bad;
    const trace_site_table *tab;
    uint32_t index;
    CHECK_EQ_U64(trace_site_records(&ts, L, &tab, &index), 0);
}

int main(void)
{
    if (!mkdtemp(dir))
        return 1;
    test_round_trip();
    test_truncation();
    test_follow();
    test_chunk_times();
    test_corruption();
    test_bad_files();
    test_packing();
    test_access_runs();
    test_run_forms();
    test_run_slots();
    test_packer_reset();
    test_workspace();
    test_stream_stored();
    test_earlier_formats();
    test_site_table_bomb();
    test_stack_table();
    test_framed_sites();
    test_due_followers();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        return 1;
    return CHECK_DONE();
}
