/*
 * cmd_analyze.c - "memtap analyze": which memory instructions of an ELF
 * file the selective instrumentation would instrument, and the accuracy
 * that buys (static MA/AIA per block, per function and in total; weighted
 * by block executions when given a profile).  Text, JSON, or one block in
 * detail.
 */
#define _GNU_SOURCE
#include "cli.h"

#include <elf.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "memtap/trace.h"
#include "report/analysis_print.h"
#include "rewrite/rewrite.h"

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

static int parse_u64(const char *s, int base, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, base);
    if (errno || end == s || *end || *s == '-')
        return -1;
    *out = v;
    return 0;
}

/* The --ignore and --tested=LIST arguments, until the file they name
 * ranges of is known. */
static const char *ignore_args[SELECT_IGNORE_MAX];
static const char *tested_args[SELECT_IGNORE_MAX];
static unsigned ntested_args;

/* The ranges of the comma-separated items of list (A-B or SYMBOL of file)
 * appended to r[*n]; 0, or 1 after printing an error. */
static int parse_range_list(const char *opt, const char *list,
                            const char *file, select_range *r, unsigned *n)
{
    while (*list) {
        size_t len = strcspn(list, ",");
        char item[256];
        if (len >= sizeof item)
            return cli_error(opt, "'%.*s': too long", (int)len, list);
        if (*n == SELECT_IGNORE_MAX)
            return cli_error(opt, "at most %d ranges", SELECT_IGNORE_MAX);
        memcpy(item, list, len);
        item[len] = '\0';
        if (len && cli_parse_range(opt, item, file, &r[*n].lo, &r[*n].hi))
            return 1;
        *n += len != 0;
        list += len + (list[len] == ',');
    }
    return 0;
}

int cli_select_ranges(select_params *p, const char *file)
{
    for (unsigned i = 0; i < p->nignore; i++)
        if (cli_parse_range("--ignore", ignore_args[i], file, &p->ignore[i].lo,
                             &p->ignore[i].hi))
            return 1;
    if (p->nignore)
        p->bypass |= BYPASS_IGNORED;
    p->ntested = 0;
    for (unsigned i = 0; i < ntested_args; i++)
        if (parse_range_list("--tested", tested_args[i], file, p->tested,
                             &p->ntested))
            return 1;
    return 0;
}

int cli_select_option(int c, const char *arg, select_params *p,
                      const char *cmd)
{
    char *end;
    unsigned only;
    switch (c) {
    case 'O':
        if (cli_parse_only(arg, &only))
            return cli_error(cmd, "--only: '%s': expected a comma-separated "
                                  "list of heap, static and stack", arg);
        p->bypass = (p->bypass & ~(unsigned)(BYPASS_STACK | BYPASS_STATIC)) |
                    only;
        return 0;
    case 'R':
        p->bypass |= BYPASS_READ_ONLY;
        return 0;
    case 'M':
        p->implicit = 1;
        return 0;
    case 'L': /* --tested: the whole file; --tested=LIST: its ranges */
        p->bypass |= BYPASS_LOADS;
        if (arg && ntested_args == SELECT_IGNORE_MAX)
            return cli_error(cmd, "--tested: at most %d lists",
                             SELECT_IGNORE_MAX);
        if (arg)
            tested_args[ntested_args++] = arg;
        return 0;
    case 'I': /* resolved once the file is known (cli_select_ranges) */
        if (p->nignore == SELECT_IGNORE_MAX)
            return cli_error(cmd, "--ignore: at most %d ranges",
                             SELECT_IGNORE_MAX);
        ignore_args[p->nignore++] = arg;
        return 0;
    case 'w':
        p->omega = strtod(arg, &end);
        if (end == arg || *end)
            return cli_error(cmd, "--omega: not a number: %s", arg);
        return 0;
    case 'c':
        if (parse_u64(arg, 0, &p->chunk))
            return cli_error(cmd, "--chunk: not a size: %s", arg);
        return 0;
    case 's':
        if (sscanf(arg, "%u,%u,%u", &p->scores.s1, &p->scores.s2,
                   &p->scores.s3) != 3)
            return cli_error(cmd, "--scores: expected S1,S2,S3");
        return 0;
    default: /* 'n' */
        p->nonselective = 1;
        return 0;
    }
}

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
            if (cli_select_option(c, optarg, &o->params, "analyze"))
                return 2;
            break;
        case 'p':
            o->profile = optarg;
            break;
        case 'b':
            if (parse_u64(optarg, 16, &o->block))
                return cli_error("analyze", "--block: not an address: %s", optarg) + 1;
            o->has_block = 1;
            break;
        case 't':
            if (parse_u64(optarg, 10, &v))
                return cli_error("analyze", "--top: not a count: %s", optarg) + 1;
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
            fputs(usage, stderr);
            return 2;
        }
    }
    if (optind != argc - 1) {
        fputs(usage, stderr);
        return 2;
    }
    *path = argv[optind];
    if (cli_select_ranges(&o->params, *path))
        return 2;
    const char *why = select_params_check(&o->params);
    if (why)
        return cli_error("analyze", "%s", why) + 1;
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
    memtap_event ev;
    uint64_t others = 0;
    while ((st = memtap_trace_next(t, &ev)) == 1) {
        if (ev.rec.kind != MEMTAP_EV_BLOCK_COUNT)
            continue;
        if (ev.rec.addr2 == id)
            analysis_weigh_add(a, w, ev.rec.addr, ev.rec.aux);
        else
            others++;
    }
    memtap_trace_close(t);
    if (st < 0)
        return snprintf(err, cap, "%s", memtap_status_string(st)), -1;
    if (!w->entries)
        return snprintf(err, cap, "no block counts of %s (%" PRIu64
                        " of other files): run a copy made by 'memtap "
                        "instrument --profile'", path, others), -1;
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
