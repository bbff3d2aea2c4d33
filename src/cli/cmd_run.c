/*
 * cmd_run.c - "memtap run": its options, the checks of the program and
 * the output, the engine's plan; the environment is run_env.c's, the
 * program's run and the summary run_wait.c's.  Optionally renders the
 * trace as text after the run.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "engine.h"
#include "trace/format.h"


#include <errno.h>
#include <getopt.h>
#include <string.h>

static const char usage[] =
    "usage: memtap run [options] [--] PROGRAM [ARGS...]\n"
    "\n"
    "Runs PROGRAM with memtap's tracer preloaded and writes its trace.\n"
    "\n"
    "Exit status: the program's.  When it dies of a signal, memtap reports\n"
    "it and ends by the same signal (128+N if that signal does not end a\n"
    "process).  When it exits but its trace may be incomplete (a failed\n"
    "write, dropped records, windows other threads could run into, a\n"
    "process without an end record), memtap warns, prints the program's\n"
    "status and exits with 125, unless --keep-going.  Signals sent to memtap\n"
    "(SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2) are passed on to\n"
    "the program.  Memtap's own exit status: 2 when used wrongly (an\n"
    "unknown option, a missing argument), 127 when PROGRAM is not found,\n"
    "1 when it cannot trace it.\n"
    "\n"
    "A forked child, or an image started by exec, writes its own trace next\n"
    "to the first one: OUT.PID.mtr (OUT.PID-N.mtr after further execs).\n"
    "\n"
    "By default every load and store to heap, data and bss is recorded, from\n"
    "the start of the program, or between its calls to memtap_start() and\n"
    "memtap_stop() when it makes them; block operations (memcpy, read, ...)\n"
    "as single events.  By default the static engine records them from\n"
    "rewritten copies of the program and its libraries (made once, kept in\n"
    "memtap's cache); the fault engine (MadT: page protection and the trap\n"
    "flag) records the same, many times slower, for a program that cannot\n"
    "be rewritten or with --engine fault.\n"
    "\n"
    "  -o, --output FILE  the trace file (default: memtap.mtr); an older\n"
    "                     trace there is kept as FILE.old, anything else\n"
    "                     there (not a trace, a link, a device) is refused\n"
    "  --from-main        record accesses from main() on (not the start-up)\n"
    "  --heap-only        record dynamic memory events only, no accesses\n"
    "  --stack-depth N    frames of the call stack each heap event carries\n"
    "                     (default 16, at most 64; 0: none): allocation\n"
    "                     sites are named past allocator wrappers, and\n"
    "                     memtap report tells each stack's allocations\n"
    "  --keep-going       exit with the program's status even when the\n"
    "                     trace is incomplete (the warnings stay)\n"
    "  -q, --quiet        no status line while the program runs (shown on a\n"
    "                     terminal from the first second: events, trace\n"
    "                     size, rate, time), no notes (what the trace\n"
    "                     left out as asked); warnings stay\n"
    "  --text FILE        also write the trace as MadT text lines to FILE\n"
    "  --symbolic         text lines are symbolic (default)\n"
    "  --raw              text lines are raw (numeric addresses)\n"
    "  --both             a raw and a symbolic line for each event\n"
    "  --compress HOW     balanced (default: zstd level 1; after a chunk\n"
    "                     of a thread's that shrank less than 2:1, its\n"
    "                     next ones stored as they are, every 16th\n"
    "                     compressed again to see: irregular addresses\n"
    "                     cost a fifth less CPU, their file up to half\n"
    "                     as large again), fast (the same, literals never\n"
    "                     Huffman-coded) or small (level 3, every chunk)\n"
    "  --consumer LIB.so  accesses that instrumented code (memtap instrument)\n"
    "                     logs go to LIB's memtap_consume() instead of the\n"
    "                     trace (see memtap/consumer.h)\n"
    "  --engine E         which engine records the accesses: auto (the\n"
    "                     default: static, and fault for a program the\n"
    "                     rewriter refuses), static (rewritten copies of\n"
    "                     the program and of every library it loads,\n"
    "                     dlopen included, made on first use in memtap's\n"
    "                     cache, see memtap cache: every explicit memory\n"
    "                     operand logs its access) or fault.  A program\n"
    "                     memtap instrument wrote runs as it is with any\n"
    "                     engine\n"
    "  --only LIST        the memory whose accesses the static engine\n"
    "                     records, comma-separated: heap (blocks and\n"
    "                     mappings the program made), static (data and\n"
    "                     bss of its modules), stack (everything else: the\n"
    "                     stacks, thread-local storage, the loader's\n"
    "                     memory); default heap,static, what the fault\n"
    "                     engine records; what it leaves out is not\n"
    "                     instrumented where that is known statically\n"
    "                     (operands from rsp: stack, RIP-relative into\n"
    "                     writable data: static, into read-only memory:\n"
    "                     left out with stack), dropped at run time else\n"
    "  --ignore-read-only the static engine: operands into read-only\n"
    "                     memory of their module are not instrumented\n"
    "  --implicit         the static engine: the stack slots of push, pop,\n"
    "                     call, ret, enter and leave are recorded too (with\n"
    "                     --only ...,stack)\n"
    "  --string-elements  string operations (rep movs, stos, lods) element\n"
    "                     by element, a load and a store each, as Valgrind\n"
    "                     Lackey records them, instead of one block event\n"
    "  --ignore A-B|SYM   accesses inside [A, B) (hexadecimal addresses)\n"
    "                     or inside the program's symbol SYM are not\n"
    "                     recorded, by either engine (repeatable)\n"
    "  --watch WHAT       record only the accesses to these objects\n"
    "                     (repeatable): A-B (hexadecimal addresses), a\n"
    "                     symbol of the program, or the blocks made at an\n"
    "                     allocation site KIND@FUNCTION+OFFSET as memtap\n"
    "                     report names it (malloc@main+26), or at any site\n"
    "                     in a function (malloc@parse); the fault engine\n"
    "                     protects only their pages, so its cost follows\n"
    "                     their accesses\n"
    "  --tested LIST      code known correct: its loads are not\n"
    "                     instrumented, its stores are (static engine);\n"
    "                     LIST is comma-separated: ranges A-B (hexadecimal,\n"
    "                     link-time) and functions of the program, and\n"
    "                     modules by base name (libfoo names libfoo.so.1)\n"
    "  -h, --help         show this help\n"
    "\n"
    "environment passed to the program:\n"
    "  MEMTAP_OUTPUT          the trace file (absolute path)\n"
    "  MEMTAP_ACCESSES        1 to record accesses (0 with --heap-only)\n"
    "  MEMTAP_WINDOW          all, main (--from-main) or marks (the program\n"
    "                         calls memtap_start)\n"
    "  MEMTAP_CONSUMER        the --consumer library (absolute path)\n"
    "  MEMTAP_COMPRESS        fast or small (--compress)\n"
    "  MEMTAP_STACK_DEPTH     --stack-depth (unset: 16)\n"
    "  MEMTAP_STRING_ELEMENTS 1 with --string-elements (else the\n"
    "                         environment's, if any)\n"
    "  MEMTAP_ONLY            the static engine's --only\n"
    "  MEMTAP_IGNORE, MEMTAP_WATCH, MEMTAP_WATCH_SITES  the --ignore and\n"
    "                         --watch ranges and allocation sites\n"
    "  MEMTAP_BYPASS, MEMTAP_TESTED, MEMTAP_IMPLICIT  the rules copies in\n"
    "                         the cache are rewritten with (--only,\n"
    "                         --ignore-read-only, --tested, --implicit)\n"
    "  MEMTAP_CACHE_DIR       the cache of rewritten copies (read by memtap)\n"
    "  MEMTAP_CACHE_MAX       what it may take (default 10G; see memtap\n"
    "                         cache --help)\n"
    "  MEMTAP_FAULT_PATH      the fault engine's paths: step (every access\n"
    "                         stepped under the trap flag), complete (most\n"
    "                         completed in its handler, the page left\n"
    "                         closed), hot (every completed instruction\n"
    "                         patched to a trampoline at once); unset: an\n"
    "                         instruction completed 16 times is patched\n"
    "  MEMTAP_FAULT_ALIAS     off: the fault engine reads and writes hot\n"
    "                         pages through /proc/self/mem (by default a\n"
    "                         page with 8 completed accesses gets an alias)\n"
    "  MEMTAP_DEBUG_TRAPS     set: name every SIGTRAP memtap passes on to\n"
    "                         the program (no rewritten module's trap, no\n"
    "                         step of the fault engine): its pc and code\n"
    "  MEMTAP_BUFFER_RECORDS  records buffered per thread before a chunk is\n"
    "                         written (default 65536; set it to inherit a\n"
    "                         smaller value)\n"
    "  MEMTAP_WRITER          who compresses and writes full buffers: mix (a\n"
    "                         hidden process of memtap's, as far as it keeps\n"
    "                         up, the program's threads the rest; the default\n"
    "                         with two CPUs or more), off (the program's\n"
    "                         threads; the default on one CPU) or all (the\n"
    "                         hidden process only)\n"
    "  LD_PRELOAD             libmemtap.so is put first\n";

#define MAX_IGNORE 32

int cmd_run(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "output", required_argument, NULL, 'o' },
        { "text", required_argument, NULL, 't' },
        { "symbolic", no_argument, NULL, 's' },
        { "raw", no_argument, NULL, 'r' },
        { "both", no_argument, NULL, 'b' },
        { "from-main", no_argument, NULL, 'm' },
        { "heap-only", no_argument, NULL, 'H' },
        { "stack-depth", required_argument, NULL, 'D' },
        { "consumer", required_argument, NULL, 'C' },
        { "keep-going", no_argument, NULL, 'k' },
        { "quiet", no_argument, NULL, 'q' },
        { "compress", required_argument, NULL, 'Z' },
        { "engine", required_argument, NULL, 'e' },
        { "only", required_argument, NULL, 'O' },
        { "ignore-read-only", no_argument, NULL, 'R' },
        { "implicit", no_argument, NULL, 'M' },
        { "string-elements", no_argument, NULL, 'S' },
        { "tested", required_argument, NULL, 'L' },
        { "ignore", required_argument, NULL, 'I' },
        { "watch", required_argument, NULL, 'W' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *output = "memtap.mtr", *text = NULL, *consumer = NULL;
    const char *compress = NULL;
    int from_main = 0, heap_only = 0, keep_going = 0, quiet = 0;
    int stack_depth = -1;
    int engine = ENGINE_AUTO;
    const char *only = NULL, *tested = NULL;
    unsigned nignore = 0, nwatch = 0;
    const char *ignore[MAX_IGNORE], *watch[MAX_IGNORE];
    int ignore_read_only = 0, implicit = 0, string_elements = 0;
    render_options opt = { RENDER_MADT, RENDER_SYMBOLIC, 0 };
    int c;
    /* '+': options end at the program's name */
    while ((c = getopt_long(argc, argv, "+o:qh", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': output = optarg; break;
        case 't': text = optarg; break;
        case 's': opt.addrs = RENDER_SYMBOLIC; break;
        case 'r': opt.addrs = RENDER_RAW; break;
        case 'b': opt.addrs = RENDER_BOTH; break;
        case 'm': from_main = 1; break;
        case 'H': heap_only = 1; break;
        case 'D': {
            uint64_t d;
            if (cli_parse_u64(optarg, 10, &d) || d > MEMTAP_STACK_MAX)
                return cli_bad_option("--stack-depth", "'%s': expected 0 to %u",
                                      optarg, MEMTAP_STACK_MAX);
            stack_depth = (int)d;
            break;
        }
        case 'C': consumer = optarg; break;
        case 'k': keep_going = 1; break;
        case 'q': quiet = 1; cli_quiet = 1; break;
        case 'Z':
            if (strcmp(optarg, "fast") && strcmp(optarg, "small") &&
                strcmp(optarg, "balanced"))
                return cli_bad_option("--compress", "'%s': expected balanced, "
                                               "fast or small", optarg);
            compress = optarg;
            break;
        case 'e':
            if (cli_engine_option(optarg, &engine))
                return 2;
            break;
        case 'O':
            if (cli_only_option(optarg))
                return 2;
            only = optarg;
            break;
        case 'R': ignore_read_only = 1; break;
        case 'M': implicit = 1; break;
        case 'S': string_elements = 1; break;
        case 'L': tested = optarg; break;
        case 'I':
            if (nignore == MAX_IGNORE)
                return cli_bad_option("--ignore", "at most %d", MAX_IGNORE);
            ignore[nignore++] = optarg;
            break;
        case 'W':
            if (nwatch == MAX_IGNORE)
                return cli_bad_option("--watch", "at most %d", MAX_IGNORE);
            watch[nwatch++] = optarg;
            break;
        case 'h': fputs(usage, stdout); return 0;
        default: return cli_usage_error(usage);
        }
    }
    if (optind >= argc)
        return cli_usage_error(usage);
    trace_launch l = { .output = output, .from_main = from_main,
                       .heap_only = heap_only, .stack_depth = stack_depth,
                       .consumer = consumer,
                       .keep_going = keep_going, .quiet = quiet,
                       .compress = compress, .engine = engine, .only = only,
                       .ignore_read_only = ignore_read_only,
                       .tested = tested, .ignore = ignore,
                       .nignore = nignore, .watch = watch, .nwatch = nwatch,
                       .implicit = implicit,
                       .string_elements = string_elements };
    char abs_out[PATH_MAX];
    int rc;
    if (cli_trace_program(argv + optind, &l, abs_out, sizeof abs_out, &rc))
        return rc ? rc : 1;
    if (text) {
        FILE *out = fopen(text, "w");
        if (!out) {
            cli_error(text, "%s", strerror(errno));
            return rc ? rc : 1;
        }
        int trc = cli_render_trace(abs_out, &opt, out, quiet);
        if (fclose(out) != 0 && !trc)
            trc = cli_error(text, "%s", strerror(errno));
        if (trc && !rc)
            rc = 1;
    }
    return rc;
}
