/*
 * cmd_report.c - "memtap report": what a trace says first, as text, as
 * JSON (--json) and as a self-contained HTML page with interactive charts
 * (--html): hottest objects and instructions, access patterns, uses after
 * free, the allocation summary, thread sharing.
 */
#include "cli.h"

#include "report/page.h"
#include "report/profile_print.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
    "usage: memtap report [options] TRACE.mtr\n"
    "\n"
    "Prints what a trace says first: its hottest objects (variables and\n"
    "sections by name, heap blocks grouped by allocation site) with loads,\n"
    "stores and block operations, bytes moved and access pattern (from\n"
    "how far each instruction moved since its access before: sequential,\n"
    "strided with its stride, same address, random; block to block when\n"
    "it went to another block of the site, as along linked nodes; - when\n"
    "no instruction accessed the object twice); its\n"
    "hottest instructions; accesses to freed blocks; the heap (allocations,\n"
    "peak, temporary blocks, blocks not freed at the end, per site); the\n"
    "fields of the hottest sites' blocks (each offset and size the\n"
    "instructions access, its loads and stores, and the bytes never\n"
    "accessed); and,\n"
    "with several threads, the objects they share.\n"
    "\n"
    "  --top N            lines per table (default 20)\n"
    "  --json FILE        everything as one JSON object, heatmaps included\n"
    "                     ('-': standard output, instead of the text)\n"
    "  --html FILE        one self-contained page (works offline) with the\n"
    "                     tables and interactive charts: accesses over time,\n"
    "                     the heap over time, address x time heatmaps of the\n"
    "                     whole heap and of the 8 hottest objects\n"
    "  --tid N[,N...]     count the accesses of these threads only\n"
    "  --seq A-B          count the accesses numbered A to B only (A-: from\n"
    "                     A on, -B: up to B); the heap's tables and the\n"
    "                     time line stay the whole trace's\n"
    "  --object NAME      count the accesses to NAME only (an object as this\n"
    "                     report names it, or a heap block as show does)\n"
    CLI_ALLOC_WRAPPER_USAGE
    "  -q, --quiet        no progress line, no notes\n"
    "  -h, --help         show this help\n"
    "\n"
    "Counts are the trace's records, as 'memtap show' prints them; a copy\n"
    "counts for its source and its destination object.  Time is the trace's\n"
    "event order in 200 equal spans.  When the trace may be incomplete the\n"
    "report says so (the counts are then a lower bound).\n";

typedef struct report_options {
    size_t top;
    const char *json, *html;
    int quiet;
} report_options;

static void step_progress(void *p) { cli_progress_step(p); }

static const char *program_of(const memtap_trace *t)
{
    for (size_t i = 0; i < memtap_trace_module_count(t); i++) {
        const memtap_module *m = memtap_trace_module_at(t, i);
        if (m->flags & MEMTAP_MODF_MAIN)
            return m->path;
    }
    return "?";
}

/* The second walk, for the heatmaps of --json and --html. */
static int add_heatmaps(profile *p, const char *path, int quiet)
{
    memtap_trace *t;
    if (cli_open_trace(path, &t))
        return 1;
    cli_progress prog;
    cli_progress_start(&prog, "report (heatmaps)",
                       memtap_trace_get_health(t)->events, NULL, quiet);
    int rc = profile_heatmaps(p, t, step_progress, &prog);
    cli_progress_end(&prog);
    memtap_trace_close(t);
    return rc == MEMTAP_OK ? 0 : cli_error(path, "%s", memtap_status_string(rc));
}

static int write_outputs(const profile *p, const profile_meta *m,
                         const report_options *opt)
{
    int status = 0;
    if (opt->json) {
        int to_stdout = strcmp(opt->json, "-") == 0;
        FILE *o = cli_output_open(to_stdout ? NULL : opt->json);
        if (!o)
            return 1;
        profile_print_json(p, m, o);
        status |= cli_output_close(o, opt->json, ferror(o) ? 1 : 0);
    }
    if (opt->html) {
        FILE *o = cli_output_open(opt->html);
        if (!o)
            return 1;
        char err[256];
        int rc = page_write(p, m, o, err, sizeof err);
        if (rc)
            cli_error(opt->html, "%s", err);
        status |= cli_output_close(o, opt->html, rc || ferror(o) ? 1 : 0);
        if (rc)
            unlink(opt->html);
    }
    return status;
}

static int report(const char *path, const report_options *opt)
{
    memtap_trace *t;
    if (cli_open_trace(path, &t))
        return 1;
    symbolizer *sym = NULL;
    if (symbolizer_create(t, stderr, &sym) != MEMTAP_OK) {
        memtap_trace_close(t);
        return cli_error(path, "out of memory");
    }
    profile p;
    cli_progress prog;
    cli_progress_start(&prog, "report", memtap_trace_get_health(t)->events,
                       NULL, opt->quiet);
    int rc = profile_build(&p, t, sym, step_progress, &prog);
    cli_progress_end(&prog);
    int status = 0;
    if (rc != MEMTAP_OK) {
        status = cli_error(path, "%s", memtap_status_string(rc));
    } else {
        char selected[256];
        profile_meta m = { path, program_of(t), memtap_trace_header(t)->pid,
                           cli_report_health(path, t, 1, NULL) == 0,
                           cli_selection_text(selected, sizeof selected) };
        if ((opt->json || opt->html) && add_heatmaps(&p, path, opt->quiet))
            status = 1;
        if (status == 0 && !(opt->json && strcmp(opt->json, "-") == 0)) {
            profile_print_text(&p, &m, stdout, opt->top);
            if (fflush(stdout) != 0)
                status = cli_error("output", "%s", strerror(errno));
        }
        if (status == 0)
            status = write_outputs(&p, &m, opt);
        profile_free(&p);
    }
    symbolizer_destroy(sym);
    memtap_trace_close(t);
    return status;
}

int cmd_report(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "top", required_argument, NULL, 't' },
        { "json", required_argument, NULL, 'j' },
        { "html", required_argument, NULL, 'H' },
        { "quiet", no_argument, NULL, 'q' },
        { "help", no_argument, NULL, 'h' },
        CLI_SELECTION_OPTIONS,
        { NULL, 0, NULL, 0 },
    };
    report_options opt = { 20, NULL, NULL, 0 };
    int c;
    char *end;
    while ((c = getopt_long(argc, argv, "qh", longopts, NULL)) != -1) {
        switch (c) {
        case 't':
            errno = 0;
            opt.top = strtoul(optarg, &end, 10);
            if (errno || *end || !opt.top)
                return cli_bad_option("--top", "'%s': expected a positive number",
                                 optarg);
            break;
        case 'j': opt.json = optarg; break;
        case 'H': opt.html = optarg; break;
        case 'q': opt.quiet = 1; cli_quiet = 1; break;
        case 'h': fputs(usage, stdout); return 0;
        CLI_SELECTION_CASES;
        default: return cli_usage_error(usage);
        }
    }
    if (optind != argc - 1)
        return cli_usage_error(usage);
    return report(argv[optind], &opt);
}
