/*
 * cmd_shadow.c - "memtap heat|share|uninit": runs a program with a
 * shadow-memory tool in libmemtap.so (or reads a trace such a run wrote)
 * and prints the tool's report.
 */
#define _GNU_SOURCE
#include "cli.h"

#include "report/shadow_report.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

static const char usage_fmt[] =
    "usage: memtap %s [options] [--] PROGRAM [ARGS...]\n"
    "       memtap %s [options] -i TRACE\n"
    "\n"
    "%s"
    "\n"
    "The program runs under the fault engine with a shadow-memory tool:\n"
    "accesses update metadata instead of being stored; the summary goes\n"
    "into the trace (with the heap events that name it) and is reported\n"
    "when the program ends.  Its exit status is passed through.\n"
    "\n"
    "  -o, --output FILE  the trace file (default: memtap-%s.mtr)\n"
    "  -i, --input FILE   report a trace an earlier run wrote; run nothing\n"
    "  --report FILE      write the report to FILE (default: stderr)\n"
    "  --top N            rows per table (default 10)\n"
    "  --json             the report as one JSON object (addresses as\n"
    "                     \"0x...\" strings, threads by id)\n"
    "  --from-main        count accesses from main() on\n"
    "%s"
    "  -h, --help         show this help\n";

static const char *what_of(const char *tool)
{
    if (strcmp(tool, "heat") == 0)
        return "Counts the accesses to every chunk of memory and reports the\n"
               "hottest objects (variables, heap blocks by allocation site),\n"
               "chunks, cache lines and pages.\n";
    if (strcmp(tool, "share") == 0)
        return "Records which threads touched each 4-byte word (Umbra's SDRD)\n"
               "and reports the words several threads share and the cache\n"
               "lines several threads write at different words (false\n"
               "sharing).\n";
    return "Reports each instruction that reads heap memory never written\n"
           "since its allocation, once, with the block's allocation site.\n";
}

static const char *options_of(const char *tool)
{
    if (strcmp(tool, "heat") == 0)
        return "  --chunk N          bytes per counter: a power of two from 8\n"
               "                     to 4096 (default 64)\n";
    if (strcmp(tool, "uninit") == 0)
        return "  --check-once       stop checking an instruction once a read\n"
               "                     of it was initialized (faster; later\n"
               "                     uninitialized reads of it go unseen)\n";
    return "";
}

static void print_usage(FILE *f, const char *tool)
{
    fprintf(f, usage_fmt, tool, tool, what_of(tool), tool, options_of(tool));
}

static int usage_error(const char *tool)
{
    char text[8192];
    snprintf(text, sizeof text, usage_fmt, tool, tool, what_of(tool), tool,
             options_of(tool));
    return cli_usage_error(text);
}

/* Reads the trace at path and prints the report. */
static int report(const char *path, const tool_report_options *opt,
                  FILE *out)
{
    memtap_trace *t;
    if (cli_open_trace(path, &t))
        return 1;
    const char *wrote = memtap_trace_info(t, "tool");
    int status = 0;
    if (!memtap_trace_info(t, "end")) {
        fprintf(stderr, "memtap: warning: %s: the traced process did not "
                        "finish: its summary is missing\n", path);
    } else if (!wrote || strncmp(wrote, opt->tool, strlen(opt->tool)) != 0 ||
               (wrote[strlen(opt->tool)] != '\n' &&
                wrote[strlen(opt->tool)] != '\0')) {
        memtap_trace_close(t);
        return cli_error(path, "not written by 'memtap %s'", opt->tool);
    }
    symbolizer *sym = NULL;
    int rc = symbolizer_create(t, stderr, &sym);
    if (rc == MEMTAP_OK)
        rc = tool_report(t, sym, opt, out);
    if (rc < 0)
        status = cli_error(path, "%s", memtap_status_string(rc));
    symbolizer_destroy(sym);
    memtap_trace_close(t);
    return status;
}

int cmd_shadow(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "output", required_argument, NULL, 'o' },
        { "input", required_argument, NULL, 'i' },
        { "report", required_argument, NULL, 'R' },
        { "top", required_argument, NULL, 'T' },
        { "chunk", required_argument, NULL, 'c' },
        { "check-once", no_argument, NULL, 'C' },
        { "from-main", no_argument, NULL, 'm' },
        { "json", no_argument, NULL, 'J' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    /* the command's name ("memtap heat": main.c names it so) */
    const char *space = strchr(argv[0], ' ');
    const char *tool = space ? space + 1 : argv[0];
    const char *input = NULL, *report_path = NULL;
    char default_out[64];
    snprintf(default_out, sizeof default_out, "memtap-%s.mtr", tool);
    trace_launch l = { .output = default_out, .tool = tool, .chunk = 64,
                       .stack_depth = -1 };
    tool_report_options opt = { tool, 10, 64, 0 };
    int c;
    while ((c = getopt_long(argc, argv, "+o:i:h", longopts, NULL)) != -1) {
        char *end;
        switch (c) {
        case 'o': l.output = optarg; break;
        case 'i': input = optarg; break;
        case 'R': report_path = optarg; break;
        case 'm': l.from_main = 1; break;
        case 'J': opt.json = 1; break;
        case 'T':
            opt.top = (unsigned)strtoul(optarg, &end, 10);
            if (*end || !opt.top)
                return cli_bad_option("--top", "'%s' is not a positive count", optarg);
            break;
        case 'c':
            l.chunk = (unsigned)strtoul(optarg, &end, 10);
            if (strcmp(tool, "heat") != 0)
                return cli_bad_option("--chunk", "only heat counts by chunk");
            if (*end || l.chunk < 8 || l.chunk > 4096 ||
                (l.chunk & (l.chunk - 1)))
                return cli_bad_option("--chunk", "'%s' is not a power of two from "
                                            "8 to 4096", optarg);
            opt.chunk = l.chunk;
            break;
        case 'C':
            if (strcmp(tool, "uninit") != 0)
                return cli_bad_option("--check-once", "only uninit checks reads");
            l.check_once = 1;
            break;
        case 'h': print_usage(stdout, tool); return 0;
        default: return usage_error(tool);
        }
    }
    if ((optind >= argc) == !input)
        return usage_error(tool);
    /* the report's file first: a place it cannot go fails before the run */
    FILE *out = report_path ? fopen(report_path, "w") : stderr;
    if (!out)
        return cli_error(report_path, "%s", strerror(errno));
    char path[PATH_MAX];
    int rc = 0;
    if (input) {
        snprintf(path, sizeof path, "%s", input);
    } else if (cli_trace_program(argv + optind, &l, path, sizeof path, &rc)) {
        if (out != stderr)
            fclose(out);
        return rc ? rc : 1;
    }
    int status = report(path, &opt, out);
    if (out != stderr && fclose(out) != 0 && !status)
        status = cli_error(report_path, "%s", strerror(errno));
    return rc ? rc : status;
}
