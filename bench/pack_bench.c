/*
 * pack_bench.c - nanoseconds per entry of trace_run_pack, the packing a
 * rewritten program's thread does when its entry buffer fills (the part
 * of writing a trace that runs on the program's own thread).
 *
 * Streams of 4096 entries (one buffer's worth) over sites whose tables
 * carry records bytes, as the runtime's do:
 *   random     one site, random 16-byte-aligned addresses in 16 MiB (a
 *              pointer chase: four-byte address deltas)
 *   sites3     three sites in turn, random words in 16 KiB
 *   sequential one site, 8-byte steps (one-byte deltas)
 *   mixed      six sites in turn, as a compressor's loop: two step one
 *              byte, two read random bytes of 64 KiB, one of 256 bytes,
 *              one of 4 MiB (address deltas of one to four bytes mixed)
 *   modules1/4/16
 *              five sites of two modules, the module changing every 1, 4
 *              or 16 entries
 * Each stream is packed ROUNDS times in a row, the predictors carried on,
 * going through VARIANTS buffers of it drawn with different random
 * numbers (packing one buffer again and again, a CPU's branch predictor
 * learns its size classes: sites3 2.4 ns an entry, 7.0 with 16 buffers,
 * which stay in a 2 MiB second-level cache as the program's fresh entries
 * do);
 * the minimum over RUNS is printed (the machine's noise only adds).
 *
 * usage: pack_bench [RUNS]                          (default 7)
 */
#define _GNU_SOURCE
#include "trace/pack.h"

#include <stdio.h>
#include <stdlib.h>
#include "clock.h"

enum { N = 4096, ROUNDS = 2048, VARIANTS = 16 };

static uint64_t next_random(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 20;
}

/* One buffer of a stream, its random numbers from *s on. */
static void fill(trace_entry *e, const char *mode, unsigned every,
                 uint64_t *seed)
{
    uint64_t s = *seed;
    for (unsigned i = 0; i < N; i++) {
        uint64_t r = next_random(&s);
        trace_entry x = { 0, 0, 0 };
        if (mode[0] == 'r') {
            x.site = 5;
            x.addr = 0x7f0000000000ull + r % (1u << 20) * 16;
        } else if (mode[0] == 's' && mode[1] == 'i') {
            x.site = 7 + i % 3;
            x.addr = 0x55550000ull + r % 4096 * 4;
        } else if (mode[0] == 'm' && mode[1] == 'i') {
            static const uint32_t span[6] = { 0, 0, 1u << 16, 1u << 16,
                                              256, 1u << 22 };
            x.site = 11 + i % 6;
            x.addr = 0x55550000ull + (uint64_t)(i % 6) * (1u << 23) +
                     (span[i % 6] ? r % span[i % 6] : i / 6);
        } else if (mode[0] == 's') {
            x.site = 3;
            x.addr = 0x7f0000000000ull + i * 8ull;
        } else {
            x.site = (i / every % 2) << MEMTAP_SITE_BITS | i % 5;
            x.addr = 0x55550000ull + i % 5 * 64 + i / 5 * 8ull;
        }
        e[i] = x;
    }
    *seed = s;
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 7;
    static memtap_site sites[64];
    static uint8_t records[64];
    for (int i = 0; i < 64; i++)
        records[i] = 1;
    const trace_site_table tabs[2] = { { 0, sites, 64, records },
                                       { 0, sites, 64, records } };
    const trace_sites ts = { tabs, 2 };
    static const struct {
        const char *name;
        unsigned every;
    } modes[] = { { "random", 0 },   { "sites3", 0 },   { "sequential", 0 },
                  { "mixed", 0 },    { "modules1", 1 }, { "modules4", 4 }, { "modules16", 16 } };
    static trace_entry e[VARIANTS][N];
    static uint8_t out[N * TRACE_ENTRY_MAX + TRACE_RUN_FRAME + 64];
    static trace_packer p;
    printf("%-11s %10s %10s\n", "stream", "ns/entry", "B/entry");
    for (size_t m = 0; m < sizeof modes / sizeof *modes; m++) {
        uint64_t seed = 12345;
        for (int v = 0; v < VARIANTS; v++)
            fill(e[v], modes[m].name, modes[m].every, &seed);
        double best = 1e9;
        size_t bytes = 0;
        for (int r = 0; r < runs; r++) {
            trace_packer_reset(&p);
            bytes = 0;
            double t0 = bench_now();
            for (int k = 0; k < ROUNDS; k++) {
                const trace_entry *b = e[k % VARIANTS], *x = b;
                uint32_t recs = 0;
                uint8_t *o = trace_run_pack(&p, &ts, &x, b + N, out,
                                            out + sizeof out, UINT32_MAX,
                                            &recs);
                if (x != b + N || recs != N) {
                    fprintf(stderr, "pack_bench: %s: packed %u of %u\n",
                            modes[m].name, recs, N);
                    return 1;
                }
                bytes += (size_t)(o - out);
            }
            double t = (bench_now() - t0) / ((double)N * ROUNDS) * 1e9;
            best = t < best ? t : best;
        }
        printf("%-11s %10.2f %10.2f\n", modes[m].name, best,
               (double)bytes / ((double)N * ROUNDS));
    }
    return 0;
}
