/*
 * cmd_export.c - "memtap export": a trace as the input of other tools
 * (Lackey's lines, Dinero IV's, an SQLite database), streaming, any trace
 * size.
 */
#include "cli.h"
#include "trace/tool.h"
#include "sys/env.h"
#include "sys/size.h"

#include "report/export.h"
#include "report/export_parquet.h"
#include "report/export_sqlite.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: memtap export [options] TRACE.mtr\n"
    "\n"
    "Writes the data accesses of a trace, in order, for other tools.\n"
    "\n"
    "  --format lackey    Valgrind Lackey's data lines (the default):\n"
    "                     ' L addr,size', ' S addr,size', and ' M addr,size'\n"
    "                     for a load and a store of one instruction at one\n"
    "                     address.  Unlike Valgrind's output: no 'I' lines\n"
    "                     (memtap traces data, not instruction fetches), only\n"
    "                     the accesses memtap recorded (the fault engine:\n"
    "                     heap and static data, not the stack), and a block\n"
    "                     operation (memcpy, memset, read, write...) is one\n"
    "                     line per cache line it touches, not the loads and\n"
    "                     stores of the function's own instructions\n"
    "  --format dinero    Dinero IV's extended din input ('r addr size',\n"
    "                     'w addr size', both in hex; a read-modify-write is\n"
    "                     both lines; -informat D, Dinero IV's default): every\n"
    "                     access and block operation split into pieces that\n"
    "                     stay inside one cache line\n"
    "  --format sqlite    an SQLite database (-o FILE, a new file): tables\n"
    "                     accesses, blocks, modules, threads and names (the\n"
    "                     objects and functions 'memtap show' names),\n"
    "                     indexed by object, instruction and thread\n"
    "  --format parquet   Parquet files (-o DIR) for DuckDB, Polars, Spark:\n"
    "                     DIR/accesses/pid=P/tid=T/, DIR/blocks/pid=P/,\n"
    "                     DIR/modules/pid=P/, DIR/threads/pid=P/,\n"
    "                     DIR/stacks/pid=P/ (hive partitions, zstd; the\n"
    "                     traces of a parent and its children export into\n"
    "                     one DIR, another run's not)\n"
    "  --line N           cache line size for the pieces (default 64; a\n"
    "                     power of two from 4 to 4096)\n"
    "  --whole-blocks     lackey: a block operation as one line of its size\n"
    "  --split SIZE       parquet: each partition in files of about SIZE\n"
    "                     bytes (K, M, G) that read as one dataset\n"
    "  --cache            sqlite, parquet: run every access through memtap\n"
    "                     cachesim's model of the data caches and fill the\n"
    "                     columns d1_misses and ll_misses (the access's\n"
    "                     lines that missed there) and miss_cause (the\n"
    "                     first D1 miss's: compulsory, capacity, conflict,\n"
    "                     true sharing, false sharing); NULL without\n"
    "  --D1 SIZE,ASSOC,LINE, --LL SIZE,ASSOC,LINE\n"
    "                     the model's levels (with --cache; default: this\n"
    "                     machine's, as memtap cachesim)\n"
    CLI_SELECTION_USAGE
    "  -o, --output FILE  write to FILE instead of standard output\n"
    "  -q, --quiet        no progress line (shown on a terminal when the\n"
    "                     lines go to a file or a pipe), no notes\n"
    "  -h, --help         show this help\n";

static int export_trace(const char *path, const export_options *opt,
                        FILE *out, int quiet)
{
    memtap_trace *t;
    if (cli_open_trace(path, &t))
        return 1;
    exporter *x = exporter_create(opt, out);
    if (!x) {
        memtap_trace_close(t);
        return cli_error(path, "out of memory");
    }
    cli_progress p;
    cli_progress_start(&p, "export", memtap_trace_get_health(t)->events, out,
                       quiet);
    trace_tool tool = exporter_tool(x);
    int rc = trace_tools_walk(t, &tool, 1, cli_progress_records, &p);
    cli_progress_end(&p);
    int status = cli_walk_done(path, t, rc, out);
    memtap_trace_close(t);
    return status;
}

static void step_progress(void *p) { cli_progress_step(p); }

typedef enum database_format { DB_NONE, DB_SQLITE, DB_PARQUET } database_format;

/* --format sqlite or parquet: the database or directory at out, with
 * the cache model's columns when cache is not NULL. */
static int export_database(const char *path, database_format format,
                           const char *out, uint64_t split,
                           const cache_geometry *cache, int quiet)
{
    memtap_trace *t;
    if (cli_open_trace(path, &t))
        return 1;
    symbolizer *sym = NULL;
    int status = 0;
    if (symbolizer_create(t, stderr, &sym) != MEMTAP_OK) {
        status = cli_error(path, "out of memory");
    } else {
        cli_progress p;
        cli_progress_start(&p, "export", memtap_trace_get_health(t)->events,
                           NULL, quiet);
        char err[512];
        int rc = format == DB_SQLITE
                     ? export_sqlite(t, sym, cache, out, step_progress, &p, err,
                                     sizeof err)
                     : export_parquet(t, sym, cache, out, split, step_progress,
                                      &p, err, sizeof err);
        cli_progress_end(&p);
        if (rc)
            status = cli_error(out, "%s", err);
        cli_report_health(path, t, 1, NULL);
    }
    symbolizer_destroy(sym);
    memtap_trace_close(t);
    return status;
}

int cmd_export(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "format", required_argument, NULL, 'f' },
        { "line", required_argument, NULL, 'l' },
        { "whole-blocks", no_argument, NULL, 'w' },
        { "split", required_argument, NULL, 's' },
        { "cache", no_argument, NULL, 'c' },
        CLI_CACHE_OPTIONS,
        { "output", required_argument, NULL, 'o' },
        { "quiet", no_argument, NULL, 'q' },
        { "help", no_argument, NULL, 'h' },
        CLI_SELECTION_OPTIONS,
        { NULL, 0, NULL, 0 },
    };
    export_options opt = { EXPORT_LACKEY, 64, 0 };
    const char *output = NULL;
    char *end;
    unsigned long line;
    int c, quiet = 0, modeled = 0;
    cli_cache cache = CLI_CACHE_DEFAULT;
    database_format database = DB_NONE;
    uint64_t split = 0;
    cache_geometry geometry[2];
    while ((c = getopt_long(argc, argv, "o:qh", longopts, NULL)) != -1) {
        switch (c) {
        case 'f':
            if (strcmp(optarg, "lackey") == 0)
                opt.format = EXPORT_LACKEY;
            else if (strcmp(optarg, "dinero") == 0)
                opt.format = EXPORT_DINERO;
            else if (strcmp(optarg, "sqlite") == 0)
                database = DB_SQLITE;
            else if (strcmp(optarg, "parquet") == 0)
                database = DB_PARQUET;
            else
                return cli_bad_option("--format", "'%s': expected lackey, dinero, "
                                             "sqlite or parquet", optarg);
            break;
        case 'l':
            errno = 0;
            line = strtoul(optarg, &end, 10);
            if (errno || *end || line < 4 || line > 4096 ||
                (line & (line - 1)))
                return cli_bad_option("--line", "'%s': a power of two from 4 to "
                                           "4096", optarg);
            opt.line = (uint32_t)line;
            break;
        case 'w': opt.whole_blocks = 1; break;
        case 's':
            if (size_parse(optarg, &split) || split < 4096)
                return cli_bad_option("--split", "'%s': expected a size of 4K "
                                                 "or more (K, M, G)", optarg);
            break;
        case 'c': modeled = 1; break;
        CLI_CACHE_CASES(cache);
        case 'o': output = optarg; break;
        case 'q': quiet = 1; cli_quiet = 1; break;
        case 'h': fputs(usage, stdout); return 0;
        CLI_SELECTION_CASES;
        default: return cli_usage_error(usage);
        }
    }
    if (optind != argc - 1)
        return cli_usage_error(usage);
    if (split && database != DB_PARQUET)
        return cli_bad_option("--split", "only --format parquet splits its files");
    if ((cache.given_d1 || cache.given_ll) && !modeled)
        return cli_bad_option(cache.given_d1 ? "--D1" : "--LL", "goes with --cache");
    if (modeled && database == DB_NONE)
        return cli_bad_option("--cache", "only --format sqlite and parquet have "
                                         "the model's columns");
    if (modeled && cli_cache_finish(&cache, "export"))
        return 1;
    geometry[0] = cache.d1;
    geometry[1] = cache.ll;
    if (database != DB_NONE)
        return output ? export_database(argv[optind], database, output, split,
                                        modeled ? geometry : NULL, quiet)
                      : cli_error(database == DB_SQLITE ? "--format sqlite"
                                                        : "--format parquet",
                                  "needs -o %s",
                                  database == DB_SQLITE ? "FILE" : "DIR");
    FILE *out = cli_output_open(output);
    if (!out)
        return 1;
    return cli_output_close(out, output,
                            export_trace(argv[optind], &opt, out, quiet));
}
