/*
 * cmd_symbolize.c - "memtap symbolize": names addresses of a traced run the
 * way "memtap show" would, e.g. to look up a pointer the program printed.
 */
#include "cli.h"
#include "symbols/namer.h"
#include "trace/tool.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: memtap symbolize [options] TRACE.mtr ADDRESS...\n"
    "\n"
    "Names each ADDRESS (hexadecimal, as the program saw it) as data: a heap\n"
    "block, variable and field, symbol, or region, plus offset.\n"
    "\n"
    "  --code        name the addresses as instructions: function+offset and\n"
    "                file:line when the binary has DWARF\n"
    "  --at SEQ      heap blocks as they were just before event SEQ\n"
    "                (default: at the end of the trace)\n"
    "  -h, --help    show this help\n";

/* One event before --at: the heap as it was then. */
static int learn(void *names, const memtap_event *ev)
{
    namer_learn(names, &ev->rec, NULL);
    return 0;
}

static int parse_address(const char *s, uint64_t *out)
{
    char *end;
    *out = strtoull(s, &end, 16);
    return *s && !*end ? 0 : -1;
}

static void name_one(namer *n, symbolizer *sym, uint64_t addr, int code)
{
    char buf[1024], line[1024];
    if (code) {
        symbolizer_code(sym, addr, buf, sizeof buf);
        if (symbolizer_line(sym, addr, line, sizeof line))
            printf("0x%" PRIx64 ": %s %s\n", addr, buf, line);
        else
            printf("0x%" PRIx64 ": %s\n", addr, buf);
        return;
    }
    const char *region = namer_name_data(n, addr, buf, sizeof buf);
    printf("0x%" PRIx64 ": %s, %s\n", addr, buf, region);
}

int cmd_symbolize(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "code", no_argument, NULL, 'c' },
        { "at", required_argument, NULL, 'a' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int code = 0;
    uint64_t at = UINT64_MAX;
    int c;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'c': code = 1; break;
        case 'a':
            if (cli_parse_u64(optarg, 10, &at) != 0)
                return cli_bad_option("--at", "'%s' is not an event's sequence "
                                              "number", optarg);
            break;
        case 'h': fputs(usage, stdout); return 0;
        default: return cli_usage_error(usage);
        }
    }
    if (argc - optind < 2)
        return cli_usage_error(usage);
    for (int i = optind + 1; i < argc; i++) {
        uint64_t a;
        if (parse_address(argv[i], &a) != 0)
            return cli_error(argv[i], "not a hexadecimal address");
    }
    const char *path = argv[optind];
    memtap_trace *t;
    symbolizer *sym = NULL;
    namer *n = NULL;
    if (cli_open_trace(path, &t))
        return 1;
    if (symbolizer_create(t, stderr, &sym) != MEMTAP_OK ||
        !(n = namer_create(sym, 0))) {
        symbolizer_destroy(sym);
        memtap_trace_close(t);
        return cli_error(path, "out of memory");
    }
    trace_walk_before(t, at, learn, n); /* names as far as the trace was read */
    for (int i = optind + 1; i < argc; i++) {
        uint64_t a;
        parse_address(argv[i], &a);
        name_one(n, sym, a, code);
    }
    namer_destroy(n);
    symbolizer_destroy(sym);
    memtap_trace_close(t);
    return 0;
}
