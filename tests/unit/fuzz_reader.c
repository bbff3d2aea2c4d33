/*
 * fuzz_reader.c - feeds mutated trace files to the reader.  Built as a
 * libFuzzer target when compiled with -fsanitize=fuzzer
 * (LLVMFuzzerTestOneInput), and otherwise as a deterministic mutation loop
 * that the test suite runs briefly: "fuzz_reader ITERATIONS [SEED]".
 */
#include "memtap/trace.h"
#include "trace/writer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char scratch[] = "/tmp/memtap-fuzz-XXXXXX";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *f = fopen(scratch, "wb");
    if (!f)
        return 0;
    if (size)
        fwrite(data, 1, size, f);
    fclose(f);
    memtap_trace *t;
    if (memtap_trace_open(scratch, &t) != MEMTAP_OK)
        return 0;
    for (size_t i = 0; i < memtap_trace_module_count(t); i++)
        (void)strlen(memtap_trace_module_at(t, i)->path);
    (void)memtap_trace_info(t, "end");
    (void)strlen(memtap_trace_maps(t));
    memtap_event ev;
    while (memtap_trace_next(t, &ev) > 0)
        ;
    memtap_trace_close(t);
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

/* A valid seed trace: info, maps, a module, events of two threads. */
static uint8_t *seed_trace(size_t *len)
{
    int fd = mkstemp(scratch);
    if (fd < 0)
        return NULL;
    close(fd);
    trace_writer *w;
    if (trace_writer_create(scratch, 1, &w) != MEMTAP_OK)
        return NULL;
    trace_writer_info(w, "pid=1\nend=exit\n");
    trace_writer_maps(w, "00400000-00401000 r-xp 0 0:0 0 /bin/x\n");
    memtap_segment seg = { 0, 0x1000, 5, 0 };
    memtap_module m = { 0, 1, 0, 0x400000, "/bin/x", NULL, 0, &seg, 1 };
    trace_writer_module(w, &m);
    for (uint64_t i = 0; i < 300; i++) {
        memtap_record r;
        memset(&r, 0, sizeof r);
        r.seq = i;
        r.kind = "LSMF"[i % 4];
        r.addr = 0x1000 + i;
        trace_writer_event(w, (uint32_t)(i / 50 % 2), &r);
    }
    trace_writer_close(w);
    FILE *f = fopen(scratch, "rb");
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    rewind(f);
    uint8_t *buf = malloc(*len);
    if (fread(buf, 1, *len, f) != *len) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    return buf;
}

int main(int argc, char **argv)
{
    long iterations = argc > 1 ? atol(argv[1]) : 1000;
    rng_state = argc > 2 ? strtoull(argv[2], NULL, 10) : 88172645463325252ull;
    size_t len;
    uint8_t *seed = seed_trace(&len);
    if (!seed)
        return 1;
    uint8_t *buf = malloc(len * 2);
    for (long it = 0; it < iterations; it++) {
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
        LLVMFuzzerTestOneInput(buf, n);
    }
    free(buf);
    free(seed);
    unlink(scratch);
    printf("fuzz_reader: %ld mutated traces read\n", iterations);
    return 0;
}
#endif
