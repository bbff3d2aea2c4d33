/*
 * cmd_show.c - "memtap show": prints a trace as MadT lines, Lackey lines or
 * CSV, streaming it so that traces of any size show in constant memory.
 */
#include "cli.h"


#include <getopt.h>

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
    CLI_SELECTION_USAGE
    "  -o, --output FILE  write to FILE instead of standard output\n"
    "  -q, --quiet        no progress line (shown on a terminal when the\n"
    "                     lines go to a file or a pipe), no notes\n"
    "  -h, --help         show this help\n";

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
        CLI_SELECTION_OPTIONS,
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
                return cli_bad_option("--format", "'%s': expected madt, lackey "
                                                  "or csv", optarg);
            opt.format = (render_format)cli_parse_format(optarg);
            break;
        case 'o': output = optarg; break;
        case 'q': quiet = 1; cli_quiet = 1; break;
        case 'h': fputs(usage, stdout); return 0;
        CLI_SELECTION_CASES;
        default: return cli_usage_error(usage);
        }
    }
    if (optind != argc - 1)
        return cli_usage_error(usage);
    FILE *out = cli_output_open(output);
    if (!out)
        return 1;
    return cli_output_close(out, output,
                            cli_render_trace(argv[optind], &opt, out, quiet));
}
