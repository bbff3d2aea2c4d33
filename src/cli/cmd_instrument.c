/*
 * cmd_instrument.c - "memtap instrument": writes a copy of a program or
 * shared library whose selected memory instructions log their accesses
 * (the static engine), and says what it did.
 */
#define _GNU_SOURCE
#include "cli.h"

#include "rt/abi.h"
#include "rewrite/rewrite.h"
#include "rewrite/verify.h"

#include <getopt.h>
#include <inttypes.h>
#include <string.h>

static const char usage[] =
    "usage: memtap instrument PROGRAM -o OUTPUT [options]\n"
    "       memtap instrument --verify COPY [PROGRAM]\n"
    "\n"
    "Writes OUTPUT, a copy of PROGRAM (an x86-64 executable, PIE or not, or a\n"
    "shared library) in which the memory instructions the static analysis\n"
    "selects log their effective addresses.  The original code stays where\n"
    "it is: each selected instruction jumps to a trampoline in a segment\n"
    "added to the file, which logs and runs the instructions it displaced.\n"
    "Run the result with 'memtap run OUTPUT ARGS' (it writes the same .mtr\n"
    "traces); run without memtap it behaves as PROGRAM and logs nothing.\n"
    "\n"
    "  -o, --output FILE  the instrumented copy (never PROGRAM itself)\n"
    "  --omega W          cost factor in [0, 1] (default 0.25)\n"
    "  --chunk C          chunk size in bytes (default 64)\n"
    "  --scores S1,S2,S3  distance scores (default 1,3,5)\n"
    "  --nonselective     instrument every memory instruction\n"
    BYPASS_HELP
    "  --mode log|ma|aia  what a record counts: 1 access (log), the\n"
    "                     accesses of its class (ma), or those of its\n"
    "                     class and the classes it stands for (aia)\n"
    "  --profile          also count the executions of every block with\n"
    "                     memory operands; the trace of a run is then a\n"
    "                     profile for 'memtap analyze --profile TRACE'\n"
    "  --no-elision       log every selected operand itself (by default\n"
    "                     an operand at a constant distance from the one\n"
    "                     logged before it, same registers, is rebuilt\n"
    "                     from that one's address when the trace is read)\n"
    "  --trap-all         reach every site through int3, none through a\n"
    "                     jump (slow: microseconds a site; tests that\n"
    "                     path)\n"
    "  --stubless         no window's jump through a stub: such windows\n"
    "                     entered through int3, those moved only for the\n"
    "                     jump before left as they are (what a file too\n"
    "                     big for its stubs gets; tests that path)\n"
    "  --verify           check the copy just written (with -o), or COPY,\n"
    "                     against PROGRAM (default: the original a cache\n"
    "                     entry names in COPY.src) with a decoder of its\n"
    "                     own: every instruction start of PROGRAM still\n"
    "                     runs as it did (unchanged, a jump to a trampoline\n"
    "                     that runs it, or a registered int3), and every\n"
    "                     changed byte is accounted for.  Exit 1 on a\n"
    "                     violation\n"
    "  -q, --quiet        no summary\n"
    "  -h, --help         show this help\n";

static int parse_mode(const char *s)
{
    if (strcmp(s, "log") == 0)
        return MT_MODE_LOG;
    if (strcmp(s, "ma") == 0)
        return MT_MODE_MA;
    if (strcmp(s, "aia") == 0)
        return MT_MODE_AIA;
    return -1;
}

static void summary(const char *in, const char *out, const rewrite_options *o,
                    const rewrite_report *r)
{
    static const char *const modes[] = { "log", "ma", "aia" };
    printf("memtap instrument: %s -> %s\n", in, out);
    if (o->params.nonselective)
        printf("  selection          non-selective, mode %s\n", modes[o->mode]);
    else
        printf("  selection          omega %.2f, chunk %" PRIu64 " B, mode %s\n",
               o->params.omega, o->params.chunk, modes[o->mode]);
    printf("  instructions       %" PRIu64 " (%" PRIu64 " with memory operands)\n",
           r->insns, r->mem_insns);
    printf("  memory operands    %" PRIu64 ", selected %" PRIu64
           " (static MA %.3f, AIA %.3f)\n",
           r->exprs, r->selected, r->ma, r->aia);
    printf("  instrumented       %" PRIu64 " operands at %" PRIu64
           " jumps and %" PRIu64 " int3 traps (%" PRIu64 " operands; %" PRIu64
           " more instructions moved)\n",
           r->sites, r->windows, r->traps, r->trapped, r->displaced);
    printf("  elided             %" PRIu64 " operands (rebuilt from a neighbour's"
           " address when read; %" PRIu64 " after other accesses)\n",
           r->elided, r->elided_later);
    printf("  string operations  %" PRIu64 " movs/stos/lods, each one block event"
           " (through int3)\n", r->strings);
    printf("  int3 avoided       %" PRIu64 " jumps moved back before their"
           " site, %" PRIu64 " windows taking in a site with no room, %" PRIu64
           " windows across the start of a block (%" PRIu64 " branch targets"
           " inside them, int3 places too), %" PRIu64 " jumps into the"
           " padding after a return or jump\n",
           r->moved_back, r->extended, r->spanning, r->entries, r->padded);
    printf("  int3 bypassed      %" PRIu64 " branches sent straight to an int3"
           " place's trampoline (%" PRIu64 " short ones moved into a window"
           " for it, others through %" PRIu64 " jumps written in padding)\n",
           r->redirected, r->shorts_moved, r->islands);
    printf("  entries            %" PRIu64 " addresses code may be entered at"
           " (%" PRIu64 " instructions the linear sweep decodes otherwise);"
           " %" PRIu64 " instruction starts inside a window, each an"
           " int3 into its trampoline\n",
           r->entry_points, r->sweep_disagree, r->inner_traps);
    printf("  stubs              %" PRIu64 " jumps through a stub (their"
           " displacement carries the int3s under them, or the next"
           " instruction's first byte; %" PRIu64 " of them in %" PRIu64
           " holes left among the trampolines); %" PRIu64 " windows no stub could"
           " serve, entered through int3; %" PRIu64 " jumps with a prefix"
           " for the jump before to share (%" PRIu64 " moving instructions"
           " with no site); %" PRIu64 " trampolines running the instruction"
           " whose first byte their jump shares; %" PRIu64 " int3 places"
           " entered by a short jump to a jump in padding instead\n",
           r->stubs, r->hole_stubs, r->holes, r->stubless, r->prefixed,
           r->evicted, r->tails,
           r->places_jumped);
    printf("  registers saved    %" PRIu64 " (%" PRIu64 " found dead, not saved)\n",
           r->saves, r->saves_skipped);
    if (o->profile)
        printf("  blocks counted     %" PRIu64 " (%" PRIu64 " through int3, %" PRIu64
               " not counted)\n", r->blocks - r->blocks_uncounted,
               r->blocks_trapped, r->blocks_uncounted);
    uint64_t bypassed = 0;
    for (int i = 0; i < BYPASS_RULES; i++)
        bypassed += r->bypass[i];
    if (bypassed)
        printf("  bypassed           %" PRIu64 " (stack %" PRIu64 ", static %"
               PRIu64 ", read-only %" PRIu64 ", tested loads %" PRIu64
               ", ignored %" PRIu64 ")\n",
               bypassed, r->bypass[0], r->bypass[1], r->bypass[2],
               r->bypass[3], r->bypass[4]);
    uint64_t lost = r->no_room + r->unaddressable + r->data_code + r->undecided;
    printf("  not instrumented   %" PRIu64, lost);
    if (lost)
        printf(" (cannot move: %" PRIu64 ", %%gs or unnamed operand: %" PRIu64
               ", among bytes taken as data: %" PRIu64 ", decoded two ways: %"
               PRIu64 ")", r->no_room, r->unaddressable, r->data_code,
               r->undecided);
    if (r->copied)
        printf("\n  left as it is: %" PRIu64 " bytes the program copies to run"
               " elsewhere (V8's embedded builtins); their accesses are not"
               " recorded", r->copied);
    printf("\n  new segment        %" PRIu64 " bytes at 0x%" PRIx64 "\n",
           r->segment_bytes, r->segment_vaddr);
}

/* The original a cache entry's COPY.src names, in buf, or NULL. */
static const char *cached_source(const char *copy, char *buf, size_t cap)
{
    char side[4096];
    snprintf(side, sizeof side, "%s.src", copy);
    FILE *f = fopen(side, "re");
    if (!f)
        return NULL;
    int ok = fgets(buf, (int)cap, f) != NULL;
    fclose(f);
    buf[strcspn(buf, "\n")] = '\0';
    return ok && buf[0] ? buf : NULL;
}

/* memtap instrument --verify: 0, 1 on a violation, or an error. */
static int verify_copy(const char *orig, const char *copy, int quiet)
{
    verify_report v;
    char err[512];
    if (rewrite_verify(orig, copy, &v, err, sizeof err) != 0)
        return cli_error("--verify", "%s", err);
    if (!quiet || v.violations)
        printf("memtap instrument: verified %s against %s\n"
               "  instruction starts %" PRIu64 ": %" PRIu64 " unchanged, %"
               PRIu64 " jumps to trampolines, %" PRIu64 " int3 traps, %" PRIu64
               " in padding under a jump's bytes (no way in seen); %" PRIu64
               " unchanged ones whose first byte ends a jump\n"
               "  branches           %" PRIu64 " sent to trampolines, %" PRIu64
               " jumps written into padding\n"
               "  relocated          %" PRIu64 " instructions found again in "
               "trampolines (%" PRIu64 " of %" PRIu64 " with memory operands)\n"
               "  initializer        %s\n"
               "  violations         %" PRIu64 "\n",
               copy, orig, v.starts, v.unchanged, v.jumps, v.traps, v.covered,
               v.shared, v.redirected, v.islands, v.relocated, v.mem_moved, v.mem_insns,
               v.start_stub ? "DT_INIT runs memtap's start stub, then the original's"
                            : "as in the original",
               v.violations);
    for (uint64_t i = 0; i < v.violations && i < VERIFY_SHOWN; i++)
        fprintf(stderr, "memtap: %s: %s\n", copy, v.shown[i]);
    return v.violations ? 1 : 0;
}

int cmd_instrument(int argc, char **argv)
{
    static const struct option longs[] = {
        { "output", required_argument, NULL, 'o' },
        { "omega", required_argument, NULL, 'w' },
        { "chunk", required_argument, NULL, 'c' },
        { "scores", required_argument, NULL, 's' },
        { "nonselective", no_argument, NULL, 'n' },
        { "only", required_argument, NULL, 'O' },
        { "ignore-read-only", no_argument, NULL, 'R' },
        { "tested", optional_argument, NULL, 'L' },
        { "implicit", no_argument, NULL, 'M' },
        { "ignore", required_argument, NULL, 'I' },
        { "mode", required_argument, NULL, 'm' },
        { "profile", no_argument, NULL, 'p' },
        { "no-elision", no_argument, NULL, 'E' },
        { "trap-all", no_argument, NULL, 'T' },
        { "stubless", no_argument, NULL, 'S' },
        { "verify", no_argument, NULL, 'V' },
        { "quiet", no_argument, NULL, 'q' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    rewrite_options o;
    memset(&o, 0, sizeof o);
    select_params_default(&o.params);
    const char *out = NULL;
    int quiet = 0, verify = 0, c;
    while ((c = getopt_long(argc, argv, "o:qh", longs, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'q': quiet = 1; cli_quiet = 1; break;
        case 'p': o.profile = 1; break;
        case 'E': o.no_elision = 1; break;
        case 'T': o.trap_all = 1; break;
        case 'S': o.stubless = 1; break;
        case 'V': verify = 1; break;
        case 'm':
            o.mode = parse_mode(optarg);
            if (o.mode < 0)
                return cli_bad_option("--mode", "'%s': expected log, ma or aia", optarg);
            break;
        case 'w':
        case 'c':
        case 's':
        case 'n':
        case 'O':
        case 'R':
        case 'L':
        case 'I':
        case 'M':
            if (cli_select_option(c, optarg, &o.params))
                return 2;
            break;
        case 'h': fputs(usage, stdout); return 0;
        default: return cli_usage_error(usage);
        }
    }
    if (verify && !out && optind < argc && argc - optind <= 2) {
        char src[4096];
        const char *copy = argv[optind];
        const char *orig = optind + 1 < argc ? argv[optind + 1]
                                             : cached_source(copy, src, sizeof src);
        if (!orig)
            return cli_error("--verify", "name the original of %s", copy);
        return verify_copy(orig, copy, quiet);
    }
    if (optind != argc - 1 || !out)
        return cli_usage_error(usage);
    const char *in = argv[optind];
    if (cli_select_ranges(&o.params, in))
        return 2;
    const char *why = select_params_check(&o.params);
    if (why)
        return cli_error("instrument", "%s", why);
    rewrite_report rep;
    char err[512];
    if (rewrite_file(in, out, &o, &rep, err, sizeof err) != 0)
        return cli_error(in, "%s", err);
    if (!quiet)
        summary(in, out, &o, &rep);
    return verify ? verify_copy(in, out, quiet) : 0;
}
