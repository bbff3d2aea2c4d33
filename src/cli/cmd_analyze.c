/*
 * cmd_analyze.c - "memtap analyze": which memory instructions of an ELF
 * file the selective instrumentation would instrument, and the accuracy
 * that buys (static MA/AIA per block, per function and in total; weighted
 * by block executions when given a profile).  Text, JSON, or one block in
 * detail.
 */
#define _GNU_SOURCE
#include "cli.h"

#include <getopt.h>
#include <inttypes.h>
#include <string.h>

#include "report/analysis_print.h"
#include "rewrite/rewrite.h"
#include "trace/tool.h"

static const char usage[] =
    "usage: memtap analyze [options] PROGRAM|LIBRARY|OBJECT\n"
    "\n"
    "Analyses every basic block of an x86-64 ELF file and reports which\n"
    "memory instructions selective instrumentation would instrument\n"
    "(BID expressions, classes, distances, iterative knapsack) and the\n"
    "static accuracy that buys (MA and AIA).\n"
    "\n"
    "  --omega W          cost factor in [0,1]: instrument ceil(W*m) of the\n"
    "                     m expression classes of each block (default 0.25)\n"
    "  --chunk C          chunk size in bytes (default 64)\n"
    "  --scores S1,S2,S3  distance scores (default 1,3,5; S1<S2<S3, S1+S2<S3)\n"
    "  --nonselective     instrument every memory instruction (baseline)\n"
    BYPASS_HELP
    "  --profile FILE     block execution counts: the trace of a run of the\n"
    "                     file instrumented with --profile, or lines\n"
    "                     'ADDRESS COUNT'; also report accuracy weighted by\n"
    "                     executions\n"
    "  --block ADDR       show the block holding ADDR in detail\n"
    "  --blocks           list every block: start, end, instructions, n, m,\n"
    "                     selected, MA_b, AIA_b, function\n"
    "  --top N            functions listed (default 20, 0 for all)\n"
    "  --json             machine-readable output\n"
    "  -h, --help         show this help\n";

typedef struct analyze_opts {
    select_params params;
    const char *profile;
    int has_block, json, blocks;
    uint64_t block;
    long top;
} analyze_opts;

/* ---- options ------------------------------------------------------------- */

static int parse_opts(int argc, char **argv, analyze_opts *o, const char **path)
{
    static const struct option longs[] = {
        {"omega", required_argument, 0, 'w'},
        {"chunk", required_argument, 0, 'c'},
        {"scores", required_argument, 0, 's'},
        {"nonselective", no_argument, 0, 'n'},
        {"only", required_argument, 0, 'O'},
        {"ignore-read-only", no_argument, 0, 'R'},
        {"tested", optional_argument, 0, 'L'},
        {"implicit", no_argument, 0, 'M'},
        {"ignore", required_argument, 0, 'I'},
        {"profile", required_argument, 0, 'p'},
        {"block", required_argument, 0, 'b'},
        {"top", required_argument, 0, 't'},
        {"json", no_argument, 0, 'j'},
        {"blocks", no_argument, 0, 'B'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    select_params_default(&o->params);
    o->top = 20;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
        uint64_t v;
        switch (c) {
        case 'w':
        case 'c':
        case 's':
        case 'n':
        case 'O':
        case 'R':
        case 'L':
        case 'I':
        case 'M':
            if (cli_select_option(c, optarg, &o->params))
                return 2;
            break;
        case 'p':
            o->profile = optarg;
            break;
        case 'b':
            if (cli_parse_u64(optarg, 16, &o->block))
                return cli_bad_option("--block", "not an address: %s", optarg);
            o->has_block = 1;
            break;
        case 't':
            if (cli_parse_u64(optarg, 10, &v))
                return cli_bad_option("--top", "not a count: %s", optarg);
            o->top = (long)v;
            break;
        case 'j':
            o->json = 1;
            break;
        case 'B':
            o->blocks = 1;
            break;
        case 'h':
            fputs(usage, stdout);
            return -1;
        default:
            return cli_usage_error(usage);
        }
    }
    if (optind != argc - 1)
        return cli_usage_error(usage);
    *path = argv[optind];
    if (cli_select_ranges(&o->params, *path))
        return 2;
    const char *why = select_params_check(&o->params);
    if (why)
        return cli_error("analyze", "%s", why) + 1;
    return 0;
}

/* The block counts of one file's copy, the trace's tool. */
typedef struct weigh {
    const analysis *a;
    analysis_weighted *w;
    uint64_t id;              /* the file's (rewrite_source_id) */
    uint64_t others;          /* counts of other files' copies */
} weigh;

static int weigh_event(void *self, const memtap_event *ev)
{
    weigh *wg = self;
    if (ev->rec.kind != MEMTAP_EV_BLOCK_COUNT)
        return 0;
    if (ev->rec.addr2 == wg->id)
        analysis_weigh_add(wg->a, wg->w, ev->rec.addr, ev->rec.aux);
    else
        wg->others++;
    return 0;
}

/* The block counts a trace holds for the file at path (its rewritten copy
 * ran with --profile).  Returns 0, or -1 with the reason in err. */
static int weigh_trace(const analysis *a, const char *path, const char *trace,
                       analysis_weighted *w, char *err, size_t cap)
{
    memset(w, 0, sizeof *w);
    uint64_t id;
    if (rewrite_source_id(path, &id) != 0)
        return snprintf(err, cap, "cannot read %s", path), -1;
    memtap_trace *t;
    int st = memtap_trace_open(trace, &t);
    if (st != MEMTAP_OK)
        return snprintf(err, cap, "%s", memtap_status_string(st)), -1;
    weigh wg = { a, w, id, 0 };
    trace_tool tool = { .self = &wg, .event = weigh_event };
    st = trace_tools_walk(t, &tool, 1, NULL, NULL);
    memtap_trace_close(t);
    if (st < 0)
        return snprintf(err, cap, "%s", memtap_status_string(st)), -1;
    if (!w->entries)
        return snprintf(err, cap, "no block counts of %s (%" PRIu64
                        " of other files): run a copy made by 'memtap "
                        "instrument --profile'", path, wg.others), -1;
    analysis_weigh_done(w);
    return 0;
}

static int is_trace(const char *path)
{
    char magic[8] = { 0 };
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t n = fread(magic, 1, sizeof magic, f);
    fclose(f);
    return n == sizeof magic && memcmp(magic, MEMTAP_TRACE_MAGIC, 8) == 0;
}

int cmd_analyze(int argc, char **argv)
{
    analyze_opts o = {0};
    const char *path = NULL;
    int rc = parse_opts(argc, argv, &o, &path);
    if (rc)
        return rc < 0 ? 0 : rc;
    analysis *a;
    rc = analysis_run(path, &o.params, &a);
    if (rc)
        return cli_error(path, "%s", elf_strerror(rc));
    analysis_weighted w;
    char err[256];
    if (o.profile && (is_trace(o.profile)
                          ? weigh_trace(a, path, o.profile, &w, err, sizeof err)
                          : analysis_weigh(a, o.profile, &w, err, sizeof err))) {
        analysis_free(a);
        return cli_error(o.profile, "%s", err);
    }
    rc = 0;
    if (o.has_block) {
        rc = analysis_print_block(stdout, a, o.block);
        if (rc == ANALYSIS_PRINT_NO_BLOCK)
            rc = cli_error("analyze", "no basic block holds 0x%" PRIx64,
                           o.block);
        else if (rc == ANALYSIS_PRINT_UNDECODABLE)
            rc = cli_error("analyze", "cannot decode the block holding 0x%"
                           PRIx64, o.block);
    } else if (o.blocks) {
        analysis_print_blocks(stdout, a);
    } else if (o.json) {
        analysis_print_json(stdout, a, o.profile ? &w : NULL);
    } else {
        analysis_print_summary(stdout, a, o.profile, o.profile ? &w : NULL);
        analysis_print_functions(stdout, a, o.top);
    }
    analysis_free(a);
    return rc;
}
