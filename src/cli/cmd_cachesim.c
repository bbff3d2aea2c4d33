/*
 * cmd_cachesim.c - "memtap cachesim": runs a trace through a model of the
 * data caches (report/cachesim.h) and says which objects miss; or runs a
 * program and the model beside it, on a thread of its own that follows
 * the trace as the program writes it (trace/follow.h).
 */
#define _GNU_SOURCE
#include "cli.h"
#include "engine.h"
#include "report/cachesim.h"
#include "report/page.h"
#include "sys/env.h"
#include "trace/follow.h"
#include "trace/info.h"
#include "trace/runstatus.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* How far a temporary trace's writer may get ahead of the model by
 * default (MiB): past it, the program waits (the disk the trace takes
 * stays about this). */
#define FOLLOW_AHEAD 64

static const char usage[] =
    "usage: memtap cachesim [options] TRACE.mtr\n"
    "       memtap cachesim [options] -- PROGRAM [ARGS...]\n"
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
    "With -- PROGRAM, memtap runs the program as memtap run does (heap,\n"
    "static data and the stack) and the model beside it, reading the trace\n"
    "as the program writes it: the report comes when the program ends (on\n"
    "stderr, the program's output staying its own), the threads\n"
    "interleaving as their chunks were written (a buffer of accesses at a\n"
    "time), and the trace, a temporary file whose read pages are given\n"
    "back as the model goes, is removed (kept with -o).  The\n"
    "processes the program starts (fork, exec) have their reports after\n"
    "its own, their traces read after the run (not in --json and --html).\n"
    "The program waits whenever its trace is 64 MiB ahead of the model\n"
    "(MEMTAP_FOLLOW_AHEAD: another number of MiB, 0: never; with -o it\n"
    "never waits unless MEMTAP_FOLLOW_AHEAD says).  SIGINT, SIGTERM,\n"
    "SIGHUP or SIGQUIT reach the program while it runs; after it, they\n"
    "stop the model (its report then covers what it read).\n"
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
    "                        miss ratios per level, reuse distances, misses\n"
    "                        over time\n"
    "  --tid N[,N...]        only the accesses of these threads (the others\n"
    "                        still name the heap blocks)\n"
    "  --seq A-B             only the accesses numbered A to B (A-: from A\n"
    "                        on, -B: up to B); the caches start empty\n"
    "  --object NAME         only the accesses to NAME (an object as memtap\n"
    "                        report names it, or a heap block as show does)\n"
    CLI_ALLOC_WRAPPER_USAGE
    "With a program:\n"
    "  --report FILE         the report to FILE (default: stderr)\n"
    "  -o, --output FILE     keep the trace as FILE (as memtap run writes it)\n"
    "  --only LIST           the memory recorded, as memtap run's --only\n"
    "                        (default: heap,static,stack)\n"
    "  --engine E            auto, static or fault, as memtap run's\n"
    "  -q, --quiet           no status line and notes, as memtap run's\n"
    "  -h, --help            show this help\n";

/* The model beside a program: a thread that follows its trace. */
typedef struct online {
    const char *path;        /* the trace file */
    atomic_int writing;      /* the program may still write it */
    int punch;               /* a temporary trace: pages read go back */
    uint64_t ahead;          /* bytes the program may get ahead of the
                                model (0: any) */
    memtap_run_status *status; /* the run's page (the program's waits),
                                while the run has it */
    pthread_mutex_t status_lock;
    const cachesim_options *opt;
    FILE *out;
    memtap_trace *t;         /* the events, read ahead on a thread */
    memtap_trace *tables;    /* the modules and maps, on the model's */
    int rc;                  /* the open's or the report's */
    int said;                /* the selection failed, and said why */
    int started;
    pthread_t thread;
    char **others;           /* the traces of the run's other processes */
    size_t nothers;
} online;

/* A signal that ends memtap: before the program runs it does (the
 * temporary directory, still empty, removed); while it runs memtap run
 * passes it on; after it, while the model reads the rest of its trace,
 * the model stops there (stopped_by). */
static volatile sig_atomic_t stopped_by, model_on;
static char stop_dir[PATH_MAX];

static void stop_model(int sig)
{
    if (model_on) {
        stopped_by = sig;
        return;
    }
    if (stop_dir[0])
        rmdir(stop_dir);
    signal(sig, SIG_DFL);
    raise(sig);
}

/* The reader's progress, and whether the program may still write
 * (trace/follow.h). */
static int still_writing(void *arg, uint64_t read)
{
    online *o = arg;
    pthread_mutex_lock(&o->status_lock);
    if (o->status && read)
        atomic_store(&o->status->follow_read, read);
    pthread_mutex_unlock(&o->status_lock);
    return stopped_by ? -1 : atomic_load(&o->writing);
}

/* From now on the program writing the followed trace waits for the
 * model (ahead: how far it may get ahead; 0: no more waiting). */
static void pace(online *o, uint64_t ahead)
{
    struct stat st;
    if (!o->ahead || stat(o->path, &st) != 0)
        return;
    pthread_mutex_lock(&o->status_lock);
    if (o->status) {
        atomic_store(&o->status->follow_ahead, ahead);
        atomic_store(&o->status->follow_ino, (uint64_t)st.st_ino);
    }
    pthread_mutex_unlock(&o->status_lock);
}

/* The model over t, its report to out, the names from `tables` (t, or
 * opt->follow): cachesim_report's status. */
static int model(memtap_trace *t, const memtap_trace *tables,
                 const cachesim_options *opt, FILE *out)
{
    symbolizer *sym = NULL;
    int rc = symbolizer_create(tables, stderr, &sym);
    if (rc == MEMTAP_OK)
        rc = cachesim_report(t, sym, opt, out);
    symbolizer_destroy(sym);
    return rc;
}

/* As show and export end: the walk's status rc, and what the trace at
 * path may lack (a trace cut short is said, its counts a lower bound). */
static int model_done(const char *path, const memtap_trace *t, int rc)
{
    return rc > 0 ? cli_error(path, "out of memory") : cli_walk_done(path, t, rc, stdout);
}

static void *follow_model(void *arg)
{
    online *o = arg;
    o->rc = trace_follow_open(o->path, still_writing, o,
                              o->punch ? TRACE_FOLLOW_PUNCH : 0, &o->t);
    if (o->rc == MEMTAP_OK)
        o->rc = trace_follow_open(o->path, still_writing, o, TRACE_FOLLOW_META,
                                  &o->tables);
    if (o->rc == MEMTAP_OK)
        o->said = cli_select_trace(o->path, o->t);
    if (o->rc == MEMTAP_OK && !o->said) {
        pace(o, o->ahead);
        cachesim_options opt = *o->opt;
        opt.follow = o->tables;
        o->rc = model(o->t, o->tables, &opt, o->out);
    }
    pace(o, 0);
    return NULL;
}

/* The program runs (trace_launch.running): the model's thread starts,
 * with every signal blocked (memtap's own thread forwards them); then
 * the run's status page goes (status NULL). */
static void running(void *arg, memtap_run_status *status)
{
    online *o = arg;
    pthread_mutex_lock(&o->status_lock);
    o->status = status;
    pthread_mutex_unlock(&o->status_lock);
    if (!status || o->started)
        return;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    o->started = pthread_create(&o->thread, NULL, follow_model, o) == 0;
    model_on = o->started;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Another process of the run wrote path (trace_launch.other). */
static void other_process(void *arg, const char *path)
{
    online *o = arg;
    char **v = realloc(o->others, (o->nothers + 1) * sizeof *v);
    if (v && (v[o->nothers] = strdup(path)))
        o->nothers++;
    if (v)
        o->others = v;
}

/* The reports of the run's other processes, their traces read after the
 * run, in text after the program's own; said of in a note for JSON and
 * the page, which hold the program's. */
static int other_reports(const online *o, const char *program, int status)
{
    for (size_t i = 0; i < o->nothers && !stopped_by; i++) {
        memtap_trace *t;
        if (cli_open_trace(o->others[i], &t)) {
            status = 1;
            continue;
        }
        const char *name = trace_program_name(t);
        name = name ? name : "?";
        uint32_t pid = memtap_trace_header(t)->pid;
        if (o->opt->json)
            cli_note("process %" PRIu32 " (%s), of %s's run, is not in the %s\n", pid,
                     name, program, o->opt->json == CACHESIM_JSON ? "JSON" : "page");
        else
            fprintf(o->out, "\nprocess %" PRIu32 " (%s), of %s's run:\n", pid, name,
                    program);
        int rc = o->opt->json ? MEMTAP_OK : model(t, t, o->opt, o->out);
        if (model_done(o->others[i], t, rc))
            status = 1;
        memtap_trace_close(t);
    }
    return status;
}

/* Removes the temporary directory dir and what the run wrote there. */
static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            char p[PATH_MAX];
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
    if (d)
        closedir(d);
    rmdir(dir);
}

/* memtap cachesim -- PROGRAM: l as the options made it (its output NULL:
 * a temporary trace). */
static int run_online(char **prog_argv, trace_launch *l,
                      const cachesim_options *opt, FILE *out)
{
    char dir[PATH_MAX] = "", temp[PATH_MAX + 16], abs_out[PATH_MAX];
    if (!l->output) {
        const char *tmp = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/memtap-cachesim-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(dir))
            return cli_error(dir, "%s", strerror(errno));
        snprintf(temp, sizeof temp, "%s/trace.mtr", dir);
        l->output = temp;
        l->temporary = 1;
    }
    const char *mib = getenv(ENV_FOLLOW_AHEAD);
    online o = { .path = abs_out, .punch = *dir != '\0', .opt = opt, .out = out,
                 .ahead = (mib ? strtoull(mib, NULL, 10) : *dir ? FOLLOW_AHEAD : 0) << 20,
                 .status_lock = PTHREAD_MUTEX_INITIALIZER };
    atomic_init(&o.writing, 1);
    l->running = running;
    l->other = other_process;
    l->hook_arg = &o;
    /* from now on a signal that ends memtap goes to stop_model, but while
     * the program runs (memtap run's own handlers pass it on) */
    snprintf(stop_dir, sizeof stop_dir, "%s", dir);
    static const int ends[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
    struct sigaction stop = { .sa_handler = stop_model }, old[4];
    for (size_t i = 0; i < 4; i++)
        sigaction(ends[i], NULL, &old[i]);
    for (size_t i = 0; i < 4; i++)
        if (old[i].sa_handler != SIG_IGN)
            sigaction(ends[i], &stop, NULL);
    int exit_code = 0;
    /* (abs_out is filled before the program starts) */
    int status = cli_trace_program(prog_argv, l, abs_out, sizeof abs_out, &exit_code);
    atomic_store(&o.writing, 0);
    if (o.started)
        pthread_join(o.thread, NULL);
    for (size_t i = 0; i < 4; i++)
        sigaction(ends[i], &old[i], NULL);
    if (stopped_by) {
        fprintf(stderr, "memtap: warning: the model was stopped by signal %d (%s) "
                        "before it had read the whole trace: its report covers the "
                        "start of the run\n", (int)stopped_by, strsignal(stopped_by));
        if (!cli_program_signal)
            cli_program_signal = stopped_by;
    }
    /* what the trace lacks the run's summary has said (its file is the
     * one the model read), unless the model found chunks it could not
     * read, which a scan of the headers does not */
    const char *what = *dir ? "the program's trace" : abs_out;
    if (o.said)
        status = 1;
    else if (o.started && !status && o.t &&
             (o.rc || memtap_trace_get_health(o.t)->corrupt_chunks))
        status = model_done(what, o.t, o.rc);
    else if (o.started && !status && o.rc)
        status = cli_error(what, "%s", memtap_status_string(o.rc));
    const char *slash = strrchr(prog_argv[0], '/');
    status = other_reports(&o, slash ? slash + 1 : prog_argv[0], status);
    for (size_t i = 0; i < o.nothers; i++)
        free(o.others[i]);
    free(o.others);
    memtap_trace_close(o.t);
    memtap_trace_close(o.tables);
    if (*dir)
        remove_dir(dir);
    return exit_code ? exit_code : status;
}

int cmd_cachesim(int argc, char **argv)
{
    static const struct option longopts[] = {
        CLI_CACHE_OPTIONS,
        { "top", required_argument, NULL, 't' },
        { "json", no_argument, NULL, 'j' },
        { "html", required_argument, NULL, 'H' },
        { "misses", required_argument, NULL, 'm' },
        { "fields", no_argument, NULL, 'F' },
        { "output", required_argument, NULL, 'o' },
        { "report", required_argument, NULL, 'R' },
        { "quiet", no_argument, NULL, 'q' },
        { "engine", required_argument, NULL, 'e' },
        { "only", required_argument, NULL, 'O' },
        { "help", no_argument, NULL, 'h' },
        CLI_SELECTION_OPTIONS,
        { NULL, 0, NULL, 0 },
    };
    cachesim_options opt = { { 0, 0, 0 }, { 0, 0, 0 }, 20, 0, NULL, 0, NULL };
    cli_cache levels = CLI_CACHE_DEFAULT;
    int c;
    const char *misses = NULL, *html = NULL, *report = NULL;
    trace_launch l = { .stack_depth = -1, .engine = ENGINE_AUTO,
                       .only = "heap,static,stack", .only_if_static = 1 };
    while ((c = getopt_long(argc, argv, "ho:q", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': l.output = optarg; break;
        case 'R': report = optarg; break;
        case 'q': l.quiet = cli_quiet = 1; break;
        case 'e':
            if (cli_engine_option(optarg, &l.engine))
                return 2;
            break;
        case 'O':
            if (cli_only_option(optarg))
                return 2;
            l.only = optarg;
            l.only_if_static = 0;
            break;
        CLI_CACHE_CASES(levels);
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
    /* a program after "--", else one trace */
    int program = optind > 1 && optind < argc && strcmp(argv[optind - 1], "--") == 0;
    if (!program && optind != argc - 1)
        return cli_usage_error(usage);
    if (!program && (l.output || l.quiet || report || l.engine != ENGINE_AUTO ||
                     !l.only_if_static))
        return cli_bad_option("-o, -q, --report, --engine, --only",
                              "options of a program run: after them, -- PROGRAM");
    if (html && report)
        return cli_bad_option("--report", "the report goes to --html's file");
    if (program && cli_selected_object())
        return cli_bad_option("--object", "not while the program runs (keep the "
                                          "trace with -o, then select)");
    if (cli_cache_finish(&levels, "cachesim"))
        return 1;
    opt.d1 = levels.d1;
    opt.ll = levels.ll;
    if (html && !page_available())
        return cli_error("--html", "this memtap was built without ECharts (run "
                                   "scripts/deps.sh, then build again)");
    memtap_trace *t = NULL;
    if (!program && cli_open_trace(argv[optind], &t))
        return 1;
    const char *to = html ? html : report;
    FILE *out = to ? cli_output_open(to) : program ? stderr : stdout;
    if (out && misses &&
        !(opt.misses = cli_output_open(strcmp(misses, "-") ? misses : NULL))) {
        if (to)
            fclose(out);
        out = NULL;
    }
    if (!out) {
        memtap_trace_close(t);
        return 1;
    }
    if (opt.misses)
        fputs("seq,tid,pc,address,level,cause,object\n", opt.misses);
    int status = program ? run_online(argv + optind, &l, &opt, out)
                         : model_done(argv[optind], t, model(t, t, &opt, out));
    if (opt.misses && opt.misses != stdout)
        status = cli_output_close(opt.misses, misses, status);
    if (to)
        status = cli_output_close(out, to, status);
    memtap_trace_close(t);
    return status;
}
