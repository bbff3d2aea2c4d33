/*
 * cmd_show.c - "memtap show": prints a trace as MadT lines, Lackey lines or
 * CSV, streaming it so that traces of any size show in constant memory.
 */
#include "cli.h"
#include "trace/walk.h"

#include "report/parent.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: memtap show [options] TRACE.mtr\n"
    "\n"
    "Prints the events of a trace, in order, one per line.\n"
    "\n"
    "  --symbolic         MadT symbolic lines ('$'): names of variables,\n"
    "                     heap blocks and functions (the default)\n"
    "  --raw              MadT raw lines ('#'): numeric addresses\n"
    "  --both             a raw line then a symbolic line for each event\n"
    "  --lines            add file:line of each instruction and each\n"
    "                     allocation's call (needs DWARF)\n"
    "  --format FORMAT    madt (default), lackey (Valgrind Lackey's data\n"
    "                     lines) or csv (a header line, then one event per\n"
    "                     line)\n"
    "  -o, --output FILE  write to FILE instead of standard output\n"
    "  -q, --quiet        no progress line (shown on a terminal when the\n"
    "                     lines go to a file or a pipe)\n"
    "  -h, --help         show this help\n";

int cli_parse_format(const char *s)
{
    if (strcmp(s, "madt") == 0)
        return RENDER_MADT;
    if (strcmp(s, "lackey") == 0)
        return RENDER_LACKEY;
    if (strcmp(s, "csv") == 0)
        return RENDER_CSV;
    return -1;
}

int cli_walk_done(const char *path, const memtap_trace *t, int rc,
                  FILE *out)
{
    int status = 0;
    if (rc < 0)
        status = cli_error(path, "%s", memtap_status_string(rc));
    if (fflush(out) != 0 || ferror(out))
        status = cli_error("output", "%s", strerror(errno));
    cli_report_health(path, t, 1);
    return status;
}

FILE *cli_output_open(const char *path)
{
    FILE *out = path ? fopen(path, "w") : stdout;
    if (!out)
        cli_error(path, "%s", strerror(errno));
    return out;
}

int cli_output_close(FILE *out, const char *path, int rc)
{
    if (out != stdout && fclose(out) != 0)
        rc = cli_error(path, "%s", strerror(errno));
    return rc;
}

int cli_open_trace(const char *path, memtap_trace **t)
{
    int rc = memtap_trace_open(path, t);
    if (rc == MEMTAP_E_IO)
        return cli_error(path, "%s", strerror(errno));
    if (rc != MEMTAP_OK)
        return cli_error(path, "%s", memtap_status_string(rc));
    return 0;
}

static void learn(void *r, const memtap_event *ev) { renderer_learn(r, ev); }

/* A forked child's trace names blocks its parent allocated. */
static void learn_parent(const memtap_trace *t, renderer *r)
{
    if (parent_replay(t, learn, r) != 0) {
        char parent[4096];
        cli_info_value(t, "parent_trace", parent, sizeof parent);
        fprintf(stderr, "memtap: warning: %s: parent trace unreadable; "
                        "blocks inherited at fork stay unnamed\n", parent);
    }
}

int cli_render_trace(const char *path, const render_options *opt, FILE *out,
                     int quiet)
{
    memtap_trace *t;
    if (cli_open_trace(path, &t))
        return 1;
    symbolizer *sym = NULL;
    int rc = symbolizer_create(t, stderr, &sym);
    renderer *r = rc == MEMTAP_OK ? renderer_create(sym, opt, out) : NULL;
    if (!r) {
        symbolizer_destroy(sym);
        memtap_trace_close(t);
        return cli_error(path, "out of memory");
    }
    learn_parent(t, r);
    renderer_begin(r);
    cli_progress p;
    cli_progress_start(&p, "show", memtap_trace_get_health(t)->events, out,
                       quiet);
    const memtap_record *recs;
    uint32_t tid;
    trace_walk *w = trace_walk_open(t);
    while ((rc = w ? trace_walk_next(w, &recs, &tid) : MEMTAP_E_NOMEM) > 0) {
        renderer_run(r, recs, (size_t)rc, tid);
        cli_progress_steps(&p, (uint64_t)rc);
    }
    trace_walk_close(w);
    cli_progress_end(&p);
    renderer_flush(r);
    int status = cli_walk_done(path, t, rc, out);
    renderer_destroy(r);
    symbolizer_destroy(sym);
    memtap_trace_close(t);
    return status;
}

int cmd_show(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "symbolic", no_argument, NULL, 's' },
        { "raw", no_argument, NULL, 'r' },
        { "both", no_argument, NULL, 'b' },
        { "lines", no_argument, NULL, 'l' },
        { "format", required_argument, NULL, 'f' },
        { "output", required_argument, NULL, 'o' },
        { "quiet", no_argument, NULL, 'q' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    render_options opt = { RENDER_MADT, RENDER_SYMBOLIC, 0 };
    const char *output = NULL;
    int c, quiet = 0;
    while ((c = getopt_long(argc, argv, "o:qh", longopts, NULL)) != -1) {
        switch (c) {
        case 's': opt.addrs = RENDER_SYMBOLIC; break;
        case 'r': opt.addrs = RENDER_RAW; break;
        case 'b': opt.addrs = RENDER_BOTH; break;
        case 'l': opt.lines = 1; break;
        case 'f':
            if (cli_parse_format(optarg) < 0)
                return cli_error("show", "unknown format '%s' (madt, lackey "
                                         "or csv)", optarg);
            opt.format = (render_format)cli_parse_format(optarg);
            break;
        case 'o': output = optarg; break;
        case 'q': quiet = 1; break;
        case 'h': fputs(usage, stdout); return 0;
        default: fputs(usage, stderr); return 2;
        }
    }
    if (optind != argc - 1) {
        fputs(usage, stderr);
        return 2;
    }
    FILE *out = cli_output_open(output);
    if (!out)
        return 1;
    return cli_output_close(out, output,
                            cli_render_trace(argv[optind], &opt, out, quiet));
}
