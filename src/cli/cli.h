/*
 * cli.h - shared pieces of the memtap command: subcommand entry points and
 * error reporting in the form "memtap: <what>: <why>".
 */
#ifndef MEMTAP_CLI_H
#define MEMTAP_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "report/cache_model.h"
#include "report/render.h"

int cmd_run(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_symbolize(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_analyze(int argc, char **argv);
int cmd_shadow(int argc, char **argv); /* heat, share, uninit */
int cmd_instrument(int argc, char **argv);
int cmd_accuracy(int argc, char **argv);
int cmd_cache(int argc, char **argv);
int cmd_cachesim(int argc, char **argv);

/* Sets the environment variable name to value, before its old value and
 * a ':' when it has one (LD_PRELOAD, LD_AUDIT, GLIBC_TUNABLES). */
void cli_prepend_env(const char *name, const char *value);

/* Finds the shared object name: $env when set (and env not NULL), else
 * beside the memtap executable (../lib, ../lib/memtap, its own
 * directory).  0 with the absolute path in out, or -1. */
int cli_find_library(const char *env, const char *name, char *out,
                     size_t cap);

/* Resolves a program name as execvp does (PATH for a bare name) into out;
 * 0, or -1 with errno set. */
int cli_find_program(const char *name, char *out, size_t cap);

struct select_params;
/* The selection options analyze and instrument share: 'w' --omega,
 * 'c' --chunk, 's' --scores, 'n' --nonselective, 'M' --implicit, and the
 * bypass rules 'O' --only, 'R' --ignore-read-only, 'L' --tested[=LIST],
 * 'I' --ignore (the ranges kept until cli_select_ranges resolves them in
 * the file).  Returns 0, or 2 after printing what is wrong. */
int cli_select_option(int c, const char *arg, struct select_params *p);
int cli_select_ranges(struct select_params *p, const char *file);
/* A number in base (0: C's prefixes), whole; 0, or -1. */
int cli_parse_u64(const char *s, int base, uint64_t *out);

/* The argument of opt (--ignore, --watch): A-B (hexadecimal addresses)
 * or SYMBOL (a symbol of file with a size): the range [lo, hi).  0, or 1
 * after printing an error. */
int cli_parse_range(const char *opt, const char *arg, const char *file,
                    uint64_t *lo, uint64_t *hi);
/* The function called name in file (with a size), as the link-time range
 * [lo, hi): 0, 1 when there is none, -1 after saying why the file cannot
 * be read. */
int cli_function_range(const char *file, const char *name, uint64_t *lo,
                       uint64_t *hi);
/* Whether an --ignore argument is a range A-B (else a symbol). */
int cli_is_range(const char *arg);
/* --watch KIND@FUNCTION[+OFFSET]: the call site (a return address, as
 * memtap report names allocation sites) or, without an offset, every call
 * site inside the function, as the link-time range [lo, hi) of file.  0,
 * or 1 after printing an error. */
int cli_parse_site(const char *arg, const char *file, uint64_t *lo,
                   uint64_t *hi);

/* --only LIST (heap, static, stack, comma-separated): the bypass rules
 * (select.h) of the memory it leaves out; 0, or -1 when not such a
 * list. */
int cli_parse_only(const char *list, unsigned *bypass);
/* The values of --only and --engine (auto, static, fault) as memtap run
 * takes them: 0, or 2 after saying why (the command used wrongly). */
int cli_only_option(const char *arg);
int cli_engine_option(const char *arg, int *engine);

/* The --help lines of the bypass options of analyze and instrument. */
#define BYPASS_HELP                                                         \
    "  --implicit         the stack slots push, pop, call, ret, enter and\n" \
    "                     leave use are operands too (with --only\n"         \
    "                     leaving out the stack, the default for run, they\n"\
    "                     are left out again)\n"                             \
    "  --only LIST        heap, static, stack (comma-separated): operands\n" \
    "                     statically known to address only memory left out\n"\
    "                     are not instrumented: from rsp (stack), RIP-\n"     \
    "                     relative into writable data (static), into\n"       \
    "                     read-only memory (left out with stack)\n"           \
    "  --ignore-read-only operands into the file's read-only memory are not\n"\
    "                     instrumented\n"                                     \
    "  --tested[=LIST]    code known correct: its loads are not\n"         \
    "                     instrumented (its stores are); the whole file, or\n"\
    "                     the comma-separated A-B ranges (hexadecimal,\n"    \
    "                     link-time) and functions of LIST\n"                \
    "  --ignore A-B|SYM   operands into [A, B) (hexadecimal, link-time) or\n"\
    "                     into the symbol SYM are not instrumented\n"

struct memtap_run_status;

/* How cli_trace_program runs a program. */
typedef struct trace_launch {
    const char *output;   /* the trace file */
    int from_main;        /* accesses from main() on */
    int heap_only;        /* no accesses, heap events only */
    int stack_depth;      /* frames of heap events' call stacks, or -1:
                             the default (MEMTAP_STACK_DEPTH) */
    const char *tool;     /* a shadow-memory tool (MEMTAP_TOOL), or NULL */
    unsigned chunk;       /* the tool's chunk size */
    int check_once;       /* the tool checks an instruction until it passes */
    const char *consumer; /* shared object whose memtap_consume gets the
                             accesses of rewritten code, or NULL */
    int keep_going;       /* an incomplete trace does not change the exit
                             status */
    int quiet;            /* no status line on a terminal */
    const char *compress; /* MEMTAP_COMPRESS: balanced, fast, small, or
                             NULL (the environment's, if any) */
    int engine;           /* enum engine_kind (engine.h); 0: fault */
    const char *only;     /* MEMTAP_ONLY for the static engine (heap,
                             static, stack), or NULL: heap,static */
    int only_if_static;   /* only is a default the fault engine may leave
                             (it records heap and static data) */
    int ignore_read_only; /* rewritten code skips operands into read-only
                             memory */
    const char *tested;   /* code whose loads rewritten code skips
                             (comma-separated module base names, and
                             ranges A-B and functions of the program),
                             or NULL */
    const char *const *ignore; /* --ignore arguments: ranges, symbols */
    unsigned nignore;
    const char *const *watch;  /* --watch arguments: ranges, symbols,
                                  allocation sites */
    unsigned nwatch;
    int implicit;         /* rewritten code logs the stack slots of push,
                             pop, call, ret, enter and leave */
    int string_elements;  /* string operations element by element */
    int temporary;        /* the trace is removed after: the summary
                             names no file */
    /* what the caller hears of the run: the program runs, and st is the
     * run's status page (the trace file may not be there yet), until it
     * is told NULL: the page goes; another process of the run (forked,
     * or an image it exec'd) wrote the trace at path */
    void (*running)(void *arg, struct memtap_run_status *st);
    void (*other)(void *arg, const char *path);
    void *hook_arg;
} trace_launch;

/* memtap run's exit status when the program exited but its trace may be
 * incomplete (write failures, dropped records, exposed windows, no end
 * record), unless --keep-going. */
#define MEMTAP_EXIT_INCOMPLETE 125
/* ... when the program is not found (as a shell says it). */
#define MEMTAP_EXIT_NOT_FOUND 127

/* The signal the traced program died of (0 if none): the command ends by
 * the same signal once it has reported (main.c). */
extern int cli_program_signal;

struct run_config;
/* The configuration the command hands the traced process (run_env.c):
 * whoever knows a setting fills its field, then puts its row into the
 * environment (cli_run_config_put), encoded as sys/run_config.h's table
 * says (TEXT as it is; LIST, SET, FD and SIZE unset when NULL, 0 or
 * negative; FLAG "1" or "0"; NUM decimal; WORDS the word). */
struct run_config *cli_run_config(void);
void cli_run_config_put(int row);
/* A LIST row's value (NULL or "": unset), then put. */
void cli_run_config_list(int row, const char *value);

struct cache_rules;
/* Sets the MEMTAP_* environment (and LD_PRELOAD) the program at prog is
 * traced with, for l, writing to abs_out (run_env.c).  0, or 1 after
 * printing an error. */
int cli_launch_env(const trace_launch *l, const char *prog,
                   const char *preload, const char *abs_out,
                   struct cache_rules *rules);

/* Runs prog_argv under libmemtap.so and waits, then checks every trace
 * file of the run and prints a summary line.  Returns 0 with the absolute
 * trace path in abs_out and the status memtap passes on (the program's
 * exit status, 128+N after signal N with cli_program_signal set, or
 * MEMTAP_EXIT_INCOMPLETE) in *exit_code; or 1 after printing an error
 * (*exit_code still holds the program's status if it ran). */
int cli_trace_program(char **prog_argv, const trace_launch *l, char *abs_out,
                      size_t cap, int *exit_code);

/* The command running ("memtap run"; "memtap" before one is chosen): the
 * prefix of getopt's messages too. */
extern const char *cli_command;

/* -q given: notes (what a trace left out as asked, how it was made) are
 * not said; warnings still are. */
extern int cli_quiet;

/* "memtap: note: ..." on stderr, unless cli_quiet (fmt ends the line). */
void cli_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A command used wrongly (an unknown option, a missing argument): prints
 * the synopsis of its usage (up to the first empty line) and where its
 * help is; returns 2 (exit status). */
int cli_usage_error(const char *usage);

/* An option given a value it does not take (the command used wrongly):
 * prints "memtap COMMAND: <option>: <why>" to stderr, as getopt's own
 * messages go; returns 2 (exit status). */
int cli_bad_option(const char *option, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Prints "memtap: <what>: <why>" to stderr; returns 1 (exit status). */
int cli_error(const char *what, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Parses "madt", "lackey" or "csv"; returns -1 otherwise. */
int cli_parse_format(const char *s);

/* Opens a trace, printing the error; returns 0 or 1.  Its walks take
 * what --tid and --seq selected (cli_selection_option). */
int cli_open_trace(const char *path, memtap_trace **t);
/* The --tid, --seq and --object selection made of t (cli_open_trace's
 * part after the open): 0, or 1 after printing an error. */
int cli_select_trace(const char *path, memtap_trace *t);
/* --object's argument, or NULL. */
const char *cli_selected_object(void);

/* --tid, --seq and --object, which show, export, report and cachesim
 * take, and --alloc-wrapper, which names their heap blocks: their getopt
 * codes and the usage lines that say them. */
enum { CLI_OPT_TID = 0x100, CLI_OPT_SEQ, CLI_OPT_OBJECT, CLI_OPT_ALLOC_WRAPPER };
#define CLI_SELECTION_OPTIONS { "tid", required_argument, NULL, CLI_OPT_TID }, \
                              { "seq", required_argument, NULL, CLI_OPT_SEQ }, \
                              { "object", required_argument, NULL, CLI_OPT_OBJECT }, \
                              { "alloc-wrapper", required_argument, NULL, \
                                CLI_OPT_ALLOC_WRAPPER }
#define CLI_ALLOC_WRAPPER_USAGE                                               \
    "  --alloc-wrapper F  name heap blocks past function F too (a pattern:\n" \
    "                     my_alloc*), as past xmalloc, strdup, g_malloc,\n"  \
    "                     std:: containers (repeatable; needs the call\n"   \
    "                     stacks memtap run records)\n"
#define CLI_SELECTION_USAGE                                                   \
    "  --tid N[,N...]     only the events of these threads (others still\n"  \
    "                     name the heap blocks of those shown)\n"             \
    "  --seq A-B          only the events numbered A to B (A-: from A on,\n" \
    "                     -B: up to B)\n"                                    \
    "  --object NAME      only the accesses to NAME as memtap report names\n" \
    "                     objects (a variable, a section, an allocation\n"   \
    "                     site: malloc@build+45) or as show names a heap\n"  \
    "                     block (<malloc0013@build+45>)\n"                 \
    CLI_ALLOC_WRAPPER_USAGE
/* Takes option c (CLI_OPT_TID, CLI_OPT_SEQ or CLI_OPT_OBJECT) with its
 * argument: 0, or 2 after saying what is wrong with it. */
int cli_selection_option(int c, const char *arg);
/* The three options' cases in a command's getopt switch. */
#define CLI_SELECTION_CASES                                                   \
    case CLI_OPT_TID:                                                         \
    case CLI_OPT_SEQ:                                                         \
    case CLI_OPT_OBJECT:                                                      \
    case CLI_OPT_ALLOC_WRAPPER:                                               \
        if (cli_selection_option(c, optarg))                                  \
            return 2;                                                         \
        break
/* --D1 and --LL, the cache levels cachesim and export --cache model:
 * their getopt codes and usage lines; geometries not given are this
 * machine's (sysfs), else Cachegrind's defaults' shape. */
enum { CLI_OPT_D1 = 0x180, CLI_OPT_LL };
#define CLI_CACHE_OPTIONS { "D1", required_argument, NULL, CLI_OPT_D1 }, \
                          { "LL", required_argument, NULL, CLI_OPT_LL }
typedef struct cli_cache {
    cache_geometry d1, ll;
    int given_d1, given_ll;
} cli_cache;
#define CLI_CACHE_DEFAULT { { 32768, 8, 64 }, { 8u << 20, 16, 64 }, 0, 0 }
/* Takes --D1 or --LL (opt) with its argument: 0, or 2 after saying what
 * is wrong with it. */
int cli_cache_option(cli_cache *c, int opt, const char *arg);
#define CLI_CACHE_CASES(geometry)                                             \
    case CLI_OPT_D1:                                                          \
    case CLI_OPT_LL:                                                          \
        if (cli_cache_option(&(geometry), c, optarg))                         \
            return 2;                                                         \
        break
/* The levels not given from sysfs; 0, or 1 after saying why they do not
 * go together (for `what`). */
int cli_cache_finish(cli_cache *c, const char *what);
/* What --tid and --seq selected in words ("threads 12, 13; events 100 to
 * 200"), or NULL when they were not given. */
const char *cli_selection_text(char *buf, size_t cap);
/* -o FILE: standard output when path is NULL; NULL after saying why it
 * cannot be opened.  cli_output_close returns rc, or 1 when closing fails
 * (a full disk shows there). */
FILE *cli_output_open(const char *path);

/* The progress line of a walk over a trace's `total` events written to
 * out (NULL: not a stream): on when stderr is a terminal, out is not, and
 * not quiet. */
typedef struct cli_progress {
    const char *what;
    uint64_t total, done;
    int on, shown;
    double start, last;
} cli_progress;
void cli_progress_start(cli_progress *p, const char *what, uint64_t total,
                        FILE *out, int quiet);
void cli_progress_tick(cli_progress *p);
void cli_progress_end(cli_progress *p);
/* One event walked past (the clock is read every 65536). */
static inline void cli_progress_step(cli_progress *p)
{
    if (p->on && (++p->done & 0xffff) == 0)
        cli_progress_tick(p);
}
/* n events walked past. */
/* As a walk's progress callback (trace/tool.h): records walked past. */
void cli_progress_records(void *p, uint64_t n);
static inline void cli_progress_steps(cli_progress *p, uint64_t n)
{
    uint64_t before = p->done;
    p->done += n;
    if (p->on && (p->done >> 16) != (before >> 16))
        cli_progress_tick(p);
}
/* The end of a walk over a trace written to out: the walk's error (rc <
 * 0), the output's, and warnings for what the trace may miss; 0 or 1. */
int cli_walk_done(const char *path, const memtap_trace *t, int rc,
                  FILE *out);
int cli_output_close(FILE *out, const char *path, int rc);

/* A copy of an INFO value (up to its newline), or "" when absent. */
void cli_info_value(const memtap_trace *t, const char *key, char *buf,
                    size_t cap);

/* Prints a warning to stderr for each thing the trace at path may be
 * missing (and a note for an ending by signal); returns how many.  Lost
 * records are counted always, printed only when `dropped` is set.  A
 * death in code the static engine changed is blamed on memtap by its
 * copy in `copies` (the run's cache, and then what the bypass rules left
 * out is noted, once a run; NULL: the one the environment's rules name). */
struct cache;
int cli_report_health(const char *path, const memtap_trace *t, int dropped,
                      const struct cache *copies);

/* Streams the trace at path to out in the given rendering (with a
 * progress line unless quiet).  Returns 0, or 1 after printing an error. */
int cli_render_trace(const char *path, const render_options *opt, FILE *out,
                     int quiet);

#endif
