/*
 * cmd_accuracy.c - "memtap accuracy": the accesses a selectively
 * instrumented run recovers, measured against a non-selective run of the
 * same input, beside the static MA and AIA the analysis estimated.
 */
#define _GNU_SOURCE
#include "cli.h"

#include "report/accuracy.h"
#include "rt/abi.h"
#include "rewrite/rewrite.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: memtap accuracy SELECTIVE.mtr --full FULL.mtr [--chunk C]\n"
    "\n"
    "Compares the trace of a selectively instrumented program with the trace\n"
    "of its non-selective copy run with the same input: for every chunk of\n"
    "C bytes (default: the chunk the selective copy was made with) of every\n"
    "object (variable, heap block by allocation, region), the accesses the\n"
    "selective trace accounts for (records times their counts, at most the\n"
    "chunk's real accesses) against the real ones.  Prints the measured\n"
    "fraction beside the static MA and AIA of the instrumented file.\n";

static const char *main_module(const memtap_trace *t)
{
    for (size_t i = 0; i < memtap_trace_module_count(t); i++) {
        const memtap_module *m = memtap_trace_module_at(t, i);
        if (m->flags & MEMTAP_MODF_MAIN)
            return m->path;
    }
    return NULL;
}

/* The rewrite header of the program that wrote the trace at path. */
static int header_of(const char *path, mt_rewrite_header *h)
{
    memtap_trace *t;
    if (cli_open_trace(path, &t))
        return -1;
    const char *exe = main_module(t);
    int rc = exe ? rewrite_read_header(exe, h) : -1;
    if (rc)
        cli_error(path, "not written by a program memtap instrument made%s%s",
                  exe ? ": " : "", exe ? exe : "");
    memtap_trace_close(t);
    return rc;
}

static double ratio(uint64_t a, uint64_t b) { return b ? (double)a / (double)b : 1.0; }

int cmd_accuracy(int argc, char **argv)
{
    static const struct option longs[] = {
        { "full", required_argument, NULL, 'f' },
        { "chunk", required_argument, NULL, 'c' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *full = NULL;
    uint64_t chunk = 0;
    int c;
    while ((c = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
        char *end;
        switch (c) {
        case 'f': full = optarg; break;
        case 'c':
            chunk = strtoull(optarg, &end, 0);
            if (*end || !chunk)
                return cli_bad_option("--chunk", "not a size: %s", optarg);
            break;
        case 'h': fputs(usage, stdout); return 0;
        default: return cli_usage_error(usage);
        }
    }
    if (optind != argc - 1 || !full)
        return cli_usage_error(usage);
    const char *sel = argv[optind];
    mt_rewrite_header hs, hf;
    if (header_of(sel, &hs) || header_of(full, &hf))
        return 1;
    if (hs.source_id != hf.source_id)
        return cli_error("accuracy", "%s and %s were written by copies of "
                                     "different programs", sel, full);
    if (!chunk)
        chunk = hs.chunk;
    accuracy_result r;
    char err[512];
    if (accuracy_compare(sel, full, chunk, &r, err, sizeof err))
        return cli_error("accuracy", "%s", err);
    static const char *const modes[] = { "log", "ma", "aia" };
    printf("memtap accuracy: %s against %s, chunks of %" PRIu64 " bytes\n", sel,
           full, chunk);
    printf("  selective copy     omega %.2f, mode %s\n", hs.omega,
           hs.mode < 3 ? modes[hs.mode] : "?");
    printf("  accesses           %" PRIu64 " in %" PRIu64 " chunks (full trace)\n",
           r.accesses, r.chunks);
    printf("  recovered          %.4f of the accesses (%" PRIu64 "), %.4f of the "
           "chunks (%" PRIu64 ")\n",
           ratio(r.recovered, r.accesses), r.recovered,
           ratio(r.chunks_found, r.chunks), r.chunks_found);
    printf("  static estimate    MA %.4f, AIA %.4f\n", hs.static_ma, hs.static_aia);
    if (r.unmatched)
        printf("  note               %" PRIu64 " accesses of the selective trace "
               "fall in chunks the full trace never touched (the runs differ)\n",
               r.unmatched);
    if (hf.mode != MT_MODE_LOG || hf.static_ma < 1.0)
        printf("  note               the full trace's copy was not made "
               "non-selective in log mode\n");
    return 0;
}
