/*
 * cmd_cachesim.c - "memtap cachesim": runs a trace through a model of the
 * data caches (report/cachesim.h) and says which objects miss.
 */
#include "cli.h"
#include "report/cachesim.h"
#include "report/page.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: memtap cachesim [options] TRACE.mtr\n"
    "\n"
    "Runs the accesses of a trace through a model of the data caches, a\n"
    "first level (D1) and a last level (LL), set-associative, least\n"
    "recently used, write-allocate, the last level looked up on a first-\n"
    "level miss (as Cachegrind models them), a first level per thread and\n"
    "one last level for all, a write taking the line out of the other\n"
    "threads' first levels, and prints the misses, then the objects\n"
    "(variables, heap blocks by allocation site, symbols, sections) and\n"
    "the instructions (with file:line) by first-level misses.  A block\n"
    "operation is an access of each line it covers.  A first-level miss\n"
    "on a line the thread had never touched is compulsory; one on a line\n"
    "another thread's write took is a coherence miss: true sharing when\n"
    "it touches a byte another thread wrote since, else false sharing;\n"
    "one a fully associative cache of the first level's size would have\n"
    "missed too is a capacity miss, any other a conflict miss.  Threads\n"
    "interleave as the trace's sequence numbers order them: every access\n"
    "under --engine fault, a buffer of accesses at a time under the\n"
    "static engine.\n"
    "\n"
    "  --D1 SIZE,ASSOC,LINE  the first level (SIZE in bytes, or with K or M)\n"
    "                        (default: this machine's, from sysfs)\n"
    "  --LL SIZE,ASSOC,LINE  the last level (default: this machine's)\n"
    "  --top N               objects and instructions listed (default 20)\n"
    "  --fields              also the fields by first-level misses: a DWARF\n"
    "                        variable's parts (array indices left out:\n"
    "                        recs[].key) and the members (or offsets) of\n"
    "                        heap blocks of up to 4 KiB, by site (a hash\n"
    "                        lookup more per access)\n"
    "  --misses FILE         also every first-level miss, one CSV line each\n"
    "                        (seq,tid,pc,address,level,cause,object: level\n"
    "                        D1 when the last level held the line, else\n"
    "                        LL); - for standard output\n"
    "  --json                the same as one JSON object (every object, the\n"
    "                        top instructions)\n"
    "  --html FILE           the same as one self-contained page (works\n"
    "                        offline) with charts: misses by object and cause,\n"
    "                        reuse distances\n"
    "  --tid N[,N...]        only the accesses of these threads (the others\n"
    "                        still name the heap blocks)\n"
    "  --seq A-B             only the accesses numbered A to B (A-: from A\n"
    "                        on, -B: up to B); the caches start empty\n"
    "  --object NAME         only the accesses to NAME (an object as memtap\n"
    "                        report names it, or a heap block as show does)\n"
    CLI_ALLOC_WRAPPER_USAGE
    "  -h, --help            show this help\n";

int cmd_cachesim(int argc, char **argv)
{
    static const struct option longopts[] = {
        CLI_CACHE_OPTIONS,
        { "top", required_argument, NULL, 't' },
        { "json", no_argument, NULL, 'j' },
        { "html", required_argument, NULL, 'H' },
        { "misses", required_argument, NULL, 'm' },
        { "fields", no_argument, NULL, 'F' },
        { "help", no_argument, NULL, 'h' },
        CLI_SELECTION_OPTIONS,
        { NULL, 0, NULL, 0 },
    };
    cachesim_options opt = { { 0, 0, 0 }, { 0, 0, 0 }, 20, 0, NULL, 0 };
    cli_cache cache = CLI_CACHE_DEFAULT;
    int c;
    const char *misses = NULL, *html = NULL;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        CLI_CACHE_CASES(cache);
        case 't':
            opt.top = atoi(optarg);
            if (opt.top < 0)
                return cli_bad_option("--top", "not a count: %s", optarg);
            break;
        case 'j': opt.json = CACHESIM_JSON; break;
        case 'H': html = optarg; opt.json = CACHESIM_PAGE; break;
        case 'm': misses = optarg; break;
        case 'F': opt.fields = 1; break;
        case 'h': fputs(usage, stdout); return 0;
        CLI_SELECTION_CASES;
        default: return cli_usage_error(usage);
        }
    }
    if (optind != argc - 1)
        return cli_usage_error(usage);
    if (cli_cache_finish(&cache, "cachesim"))
        return 1;
    opt.d1 = cache.d1;
    opt.ll = cache.ll;
    if (html && !page_available())
        return cli_error("--html", "this memtap was built without ECharts (run "
                                   "scripts/deps.sh, then build again)");
    const char *path = argv[optind];
    memtap_trace *t;
    if (cli_open_trace(path, &t))
        return 1;
    FILE *out = html ? cli_output_open(html) : stdout;
    if (!out) {
        memtap_trace_close(t);
        return 1;
    }
    if (misses && !(opt.misses = cli_output_open(strcmp(misses, "-") ? misses : NULL))) {
        memtap_trace_close(t);
        return 1;
    }
    if (opt.misses)
        fputs("seq,tid,pc,address,level,cause,object\n", opt.misses);
    symbolizer *sym = NULL;
    int rc = symbolizer_create(t, stderr, &sym);
    if (rc == MEMTAP_OK)
        rc = cachesim_report(t, sym, &opt, out);
    symbolizer_destroy(sym);
    /* as show and export end: the walk's status, and what the trace may
     * lack (a trace cut short is said, its counts a lower bound) */
    int status = rc > 0 ? cli_error(path, "out of memory")
                        : cli_walk_done(path, t, rc, stdout);
    if (opt.misses && opt.misses != stdout)
        status = cli_output_close(opt.misses, misses, status);
    if (html)
        status = cli_output_close(out, html, status);
    memtap_trace_close(t);
    return status;
}
