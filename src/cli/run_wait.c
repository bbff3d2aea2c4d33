/*
 * run_wait.c - the traced program's run, seen from memtap: started in its
 * own process with the status page libmemtap.so keeps current (events,
 * bytes, drops) shared with it, signals sent to memtap passed on, progress
 * on a terminal, its exit status passed through, and the summary of what
 * the trace holds, with a non-zero exit when it is incomplete.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "sys/run_config.h"
#include "engine.h"

#include "memtap/trace.h"
#include "trace/runstatus.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Signals a process sends to memtap while the program runs are passed on
 * to the program (the terminal's go to the whole foreground group, the
 * program included, and are not passed twice). */
static const int forwarded[] = { SIGINT, SIGQUIT, SIGTERM, SIGHUP,
                                 SIGUSR1, SIGUSR2 };
#define NFORWARDED (sizeof forwarded / sizeof *forwarded)
static volatile sig_atomic_t program_pid;
/* The last signal meant to end the program (SIGTERM, SIGINT, SIGHUP,
 * SIGQUIT), forwarded or sent by the terminal, and when it came. */
static volatile sig_atomic_t stop_sig;
static struct timespec stop_time;

/* How long a signal meant to end the program may stay pending, blocked,
 * before memtap ends the program itself: a program whose every signal
 * stays blocked is stuck (in memtap's handlers, or its own), and a
 * program that takes its signals through signalfd reads them sooner. */
#define STOP_GRACE_SECONDS 3.0

static void forward(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    if (sig != SIGUSR1 && sig != SIGUSR2) {
        clock_gettime(CLOCK_MONOTONIC, &stop_time);
        stop_sig = sig;
    }
    if (si->si_code != SI_KERNEL && program_pid > 0)
        kill((pid_t)program_pid, sig);
}

/* Whether sig is pending for process pid or one of its threads, by its
 * /proc status (the shared set, ShdPnd, and its main thread's SigPnd). */
static int signal_pending(pid_t pid, int sig)
{
    char path[64], line[128];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    int pending = 0;
    while (!pending && fgets(line, sizeof line, f)) {
        unsigned long long set;
        if ((sscanf(line, "ShdPnd: %llx", &set) == 1 ||
             sscanf(line, "SigPnd: %llx", &set) == 1) &&
            (set >> (sig - 1) & 1))
            pending = 1;
    }
    fclose(f);
    return pending;
}

/* Ends pid with SIGKILL, once, when the signal meant to end it has stayed
 * pending longer than STOP_GRACE_SECONDS. */
static void end_if_stuck(pid_t pid)
{
    static int killed;
    int sig = stop_sig;
    if (!sig || killed)
        return;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double waited = (double)(now.tv_sec - stop_time.tv_sec) +
                    (double)(now.tv_nsec - stop_time.tv_nsec) / 1e9;
    if (waited < STOP_GRACE_SECONDS || !signal_pending(pid, sig))
        return;
    killed = 1;
    fprintf(stderr,
            "%smemtap: the program left %s pending for %.0f s with it "
            "blocked; ending it with SIGKILL (what the trace holds is "
            "kept)\n",
            isatty(2) ? "\r\033[K" : "", strsignal(sig), STOP_GRACE_SECONDS);
    kill(pid, SIGKILL);
}

static void print_size(FILE *f, uint64_t bytes)
{
    static const char *const unit[] = { "bytes", "KiB", "MiB", "GiB", "TiB" };
    double v = (double)bytes;
    size_t u = 0;
    while (v >= 1024 && u + 1 < sizeof unit / sizeof *unit) {
        v /= 1024;
        u++;
    }
    fprintf(f, u ? "%.1f %s" : "%.0f %s", v, unit[u]);
}

static double seconds_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) +
           (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* One status line, rewritten in place: events, trace size, rate, time. */
static void show_progress(const memtap_run_status *st, double secs)
{
    uint64_t events = atomic_load(&st->events);
    fprintf(stderr, "\rmemtap: %" PRIu64 " events, ", events);
    print_size(stderr, atomic_load(&st->bytes));
    fprintf(stderr, ", %.0f events/s, %.0f s\033[K", (double)events / secs,
            secs);
    fflush(stderr);
}

/* Sleeps until pid exits or 100 ms pass: on its pidfd when there is one
 * (a short program is not kept waiting for the tick), else a nap. */
static void nap_for(int pidfd)
{
    struct pollfd p = { pidfd, POLLIN, 0 };
    if (pidfd < 0 || poll(&p, 1, 100) < 0) {
        struct timespec nap = { 0, 100 * 1000 * 1000 };
        nanosleep(&nap, NULL);
    }
}

/* Reaps what has ended of memtap's children: the program pid (its status
 * in *status; whether it ended), and the orphans memtap took in as the
 * run's subreaper (a descendant whose parent ended first), which are
 * nobody else's to reap. */
static int reap_children(pid_t pid, int *status)
{
    for (;;) {
        int s;
        pid_t r = waitpid(-1, &s, WNOHANG | __WALL);
        if (r == pid) {
            *status = s;
            return 1;
        }
        if (r == 0 || (r < 0 && errno != EINTR))
            return r < 0 && errno == ECHILD;
    }
}

/* The writers of the run's processes: hidden processes of libmemtap.so's
 * that no traced process has as its child, orphans memtap took in as the
 * run's subreaper.  One whose process ended without stopping it (killed)
 * takes the name ENDING_NAME once it sees that end (within
 * NOTICE_SECONDS), writes what it was handed, then ends; one still named
 * WRITER_NAME after that writes for a process still running (one the
 * program left behind).  Waits for the ending ones, at most
 * WRITERS_SECONDS in all: the trace is whole and their CPU counted once
 * they are reaped.  A zombie writer is reaped at once. */
#define WRITER_NAME "memtap-writer"
#define ENDING_NAME "memtap-ending"
#define NOTICE_SECONDS 0.25
#define WRITERS_SECONDS 10.0

/* What child pid of memtap's is, by its /proc stat (name and state): a
 * writer that ended is an ending one. */
enum { CHILD_GONE = 0, CHILD_WRITER = 1, CHILD_ENDING = 2, CHILD_PROCESS = 4 };
static unsigned child_kind(long pid)
{
    char path[64], stat[256];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(stat, 1, sizeof stat - 1, f) : 0;
    if (f)
        fclose(f);
    stat[n] = '\0';
    char *open = strchr(stat, '('), *close = strrchr(stat, ')');
    if (!open || !close || close < open)
        return CHILD_GONE;
    *close = '\0';
    const char *name = open + 1;
    int ended = close[1] == ' ' && close[2] == 'Z';
    if (strcmp(name, ENDING_NAME) == 0 || strcmp(name, WRITER_NAME) == 0)
        return ended || strcmp(name, ENDING_NAME) == 0 ? CHILD_ENDING : CHILD_WRITER;
    return ended ? CHILD_GONE : CHILD_PROCESS;
}

/* The first of memtap's children of one of the kinds (CHILD_*), or 0,
 * and in *count how many there are (the children of each of its
 * threads: a taken-in orphan is any thread's). */
static long child_of_kind(unsigned kinds, size_t *count)
{
    glob_t g;
    long found = 0;
    *count = 0;
    if (glob("/proc/self/task/*/children", 0, NULL, &g) != 0)
        return 0;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        FILE *f = fopen(g.gl_pathv[i], "r");
        long pid;
        while (f && fscanf(f, "%ld", &pid) == 1)
            if (child_kind(pid) & kinds) {
                found = found ? found : pid;
                ++*count;
            }
        if (f)
            fclose(f);
    }
    globfree(&g);
    return found;
}

static void reap_writers(void)
{
    struct timespec t0, nap = { 0, 2 * 1000 * 1000 };
    clock_gettime(CLOCK_MONOTONIC, &t0);
    size_t n;
    for (long pid; (pid = child_of_kind(seconds_since(&t0) < NOTICE_SECONDS
                                            ? CHILD_ENDING | CHILD_WRITER
                                            : CHILD_ENDING, &n)) > 0;) {
        if (waitpid((pid_t)pid, NULL, WNOHANG | __WALL) != 0)
            continue;
        if (seconds_since(&t0) >= WRITERS_SECONDS)
            return;
        nanosleep(&nap, NULL);
    }
}

/* Waits for pid; with st, shows a status line from the first second on
 * and clears it at the end.  A program that cannot take the signal meant
 * to end it is ended (end_if_stuck). */
static int wait_for(pid_t pid, const memtap_run_status *st)
{
    int status = -1;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int shown = 0, pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    for (;;) {
        if (reap_children(pid, &status))
            break;
        nap_for(pidfd);
        end_if_stuck(pid);
        double secs = seconds_since(&t0);
        if (st && secs >= 1.0) {
            show_progress(st, secs);
            shown = 1;
        }
    }
    if (pidfd >= 0)
        close(pidfd);
    if (shown)
        fputs("\r\033[K", stderr);
    return status;
}

/* Runs argv and returns its wait status, or -1; with progress, shows
 * st's on stderr meanwhile; tells l->running once it runs. */
static int spawn_and_wait(char **argv, const char *path, memtap_run_status *st,
                          int progress, const trace_launch *l)
{
    struct sigaction fwd, old[NFORWARDED];
    memset(&fwd, 0, sizeof fwd);
    fwd.sa_sigaction = forward;
    fwd.sa_flags = SA_SIGINFO | SA_RESTART;
    sigset_t block, mask;
    sigemptyset(&block);
    for (size_t i = 0; i < NFORWARDED; i++)
        sigaddset(&block, forwarded[i]);
    sigprocmask(SIG_BLOCK, &block, &mask);
    for (size_t i = 0; i < NFORWARDED; i++) {
        sigaction(forwarded[i], NULL, &old[i]);
        if (old[i].sa_handler != SIG_IGN) /* an ignored one stays so */
            sigaction(forwarded[i], &fwd, NULL);
    }
    /* the run's orphans come to memtap, not to init: among them the
     * writer of a process killed before it could stop it */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    /* posix_spawn, not fork: no copy of memtap's page tables, and an exec
     * that fails comes back as its error.  The program starts with the
     * mask memtap had; exec resets the forwarding handlers */
    posix_spawnattr_t attr;
    pid_t pid = -1;
    int err = posix_spawnattr_init(&attr);
    if (!err) {
        posix_spawnattr_setsigmask(&attr, &mask);
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
        err = posix_spawn(&pid, path, NULL, &attr, argv, environ);
        posix_spawnattr_destroy(&attr);
    }
    if (err) {
        pid = -1;
        errno = err;
    }
    program_pid = pid;
    sigprocmask(SIG_SETMASK, &mask, NULL);
    if (pid > 0 && l->running)
        l->running(l->hook_arg, st);
    int status = pid > 0 ? wait_for(pid, progress ? st : NULL) : -1;
    if (pid > 0)
        reap_writers();
    program_pid = 0;
    for (size_t i = 0; i < NFORWARDED; i++)
        sigaction(forwarded[i], &old[i], NULL);
    errno = err;
    return pid > 0 ? status : -1;
}

/* ---- the status page shared with the traced processes ---- */

typedef struct status_page {
    int fd;
    memtap_run_status *st;
} status_page;

/* Creates the page and names it in MEMTAP_STATUS_FD.  Its descriptor is
 * inherited by the program and kept across its execs, beside the trace's
 * (which the traced process opens at 700). */
static int status_open(status_page *p)
{
    p->st = NULL;
    int fd = memfd_create("memtap-status", 0);
    /* high, out of the program's way; under a descriptor limit of 701 or
     * less, just under the limit (F_DUPFD fails past it) */
    struct rlimit rl;
    int base = 701;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur <= 702)
        base = rl.rlim_cur > 8 ? (int)rl.rlim_cur - 2 : 3;
    p->fd = fd >= 0 ? fcntl(fd, F_DUPFD, base) : -1;
    if (fd >= 0)
        close(fd);
    /* the file holds the struct only (a small RLIMIT_FSIZE still fits) */
    if (p->fd < 0 || ftruncate(p->fd, sizeof *p->st) != 0)
        return cli_error("status page", "%s", strerror(errno));
    void *m = mmap(NULL, MEMTAP_STATUS_SIZE, PROT_READ | PROT_WRITE,
                   MAP_SHARED, p->fd, 0);
    if (m == MAP_FAILED)
        return cli_error("status page", "%s", strerror(errno));
    p->st = m;
    p->st->magic = MEMTAP_STATUS_MAGIC;
    p->st->version = MEMTAP_STATUS_VERSION;
    uint64_t id = 0;
    if (getrandom(&id, sizeof id, 0) != (ssize_t)sizeof id)
        id = (uint64_t)getpid() << 32 ^ (uint64_t)time(NULL);
    p->st->run_id = id | 1; /* 0: none */
    p->st->run_pid = getpid();
    cli_run_config()->status_fd = p->fd;
    cli_run_config_put(RUN_CONFIG_status_fd);
    return 0;
}

static void status_close(status_page *p)
{
    if (p->st)
        munmap(p->st, MEMTAP_STATUS_SIZE);
    if (p->fd >= 0)
        close(p->fd);
    cli_run_config()->status_fd = -1;
    cli_run_config_put(RUN_CONFIG_status_fd);
}

/* The trace files whose names say they may be this run's forked or
 * exec'd processes' (OUTPUT.PID.mtr, made since it began), at the start
 * of g->gl_pathv; returns how many. */
static size_t other_traces(const char *output, time_t since, glob_t *g)
{
    char pattern[PATH_MAX + 16];
    size_t len = strlen(output), n = 0;
    if (len > 4 && strcmp(output + len - 4, ".mtr") == 0)
        len -= 4;
    snprintf(pattern, sizeof pattern, "%.*s.*.mtr", (int)len, output);
    if (glob(pattern, 0, NULL, g) != 0)
        return 0;
    for (size_t i = 0; i < g->gl_pathc; i++) {
        struct stat st;
        if (stat(g->gl_pathv[i], &st) != 0 || st.st_mtime < since)
            continue;
        char *keep = g->gl_pathv[n];
        g->gl_pathv[n++] = g->gl_pathv[i];
        g->gl_pathv[i] = keep;
    }
    return n;
}

/* Says which modules the static engine traced in one trace file, and
 * warns about what the file may be missing; returns how many things.
 * With run_id (another process's file), a trace whose INFO "run" names
 * another run (one just before, in the same second, or one at the same
 * time writing the same names) is not this run's: *ours says so, and
 * nothing is said of it; one with no "run" (killed before its INFO, or
 * from a memtap before run numbers) is taken as this run's.  A temporary
 * trace's file is not named. */
static int check_trace(const char *path, uint64_t run_id, int dropped,
                       const engine_plan *plan, int quiet, int temporary,
                       int *ours)
{
    memtap_trace *t;
    int rc = memtap_trace_open(path, &t);
    const char *v = rc == MEMTAP_OK ? memtap_trace_info(t, "run") : NULL;
    *ours = !run_id || !v || strtoull(v, NULL, 10) == run_id;
    if (!*ours) {
        memtap_trace_close(t);
        return 0;
    }
    if (run_id && !temporary)
        fprintf(stderr, "memtap: also wrote %s\n", path);
    if (rc != MEMTAP_OK) {
        fprintf(stderr, "memtap: warning: %s: unreadable: %s\n", path,
                rc == MEMTAP_E_IO ? strerror(errno)
                                  : memtap_status_string(rc));
        return 1;
    }
    int problems = engine_report(plan, path, t, quiet);
    problems += cli_report_health(path, t, dropped,
                                  plan->engine == ENGINE_STATIC ? &plan->cache
                                                                : NULL);
    memtap_trace_close(t);
    return problems;
}

/* What the status page knows and the files do not say: traces that were
 * never created, or are not where this run wrote them; returns how many
 * things. */
static int check_files(const char *output, const memtap_run_status *st,
                       size_t files)
{
    int problems = 0;
    uint32_t no_file = atomic_load(&st->no_file);
    uint32_t opened = atomic_load(&st->processes);
    if (no_file && ++problems)
        fprintf(stderr, "memtap: warning: trace %s: %" PRIu32 " traced "
                        "process(es) could not create their trace file: "
                        "their events are missing\n", output, no_file);
    uint32_t untraced = atomic_load(&st->untraced_execs);
    if (untraced && ++problems)
        fprintf(stderr, "memtap: warning: trace %s: %" PRIu32 " exec(s) of "
                        "statically linked programs, which memtap cannot "
                        "trace (named above): their accesses are missing\n",
                output, untraced);
    /* processes the program left running came to memtap, the run's
     * subreaper: their traces go on (and may not be found yet) */
    size_t left;
    child_of_kind(CHILD_PROCESS, &left);
    if (left && ++problems)
        fprintf(stderr, "memtap: warning: trace %s: %zu process(es) the "
                        "program left behind still run: their traces are "
                        "not complete\n", output, left);
    else if (opened > files && ++problems)
        fprintf(stderr, "memtap: warning: trace %s: %" PRIu32 " of the "
                        "run's %" PRIu32 " trace files are gone (removed or "
                        "renamed while it ran)\n", output,
                opened - (uint32_t)files, opened);
    return problems;
}

/* v with its thousands grouped ("17,164") into buf (32 bytes). */
static const char *grouped(uint64_t v, char buf[32])
{
    char digits[24];
    int n = snprintf(digits, sizeof digits, "%" PRIu64, v), at = 0;
    for (int i = 0; i < n; i++) {
        if (i && (n - i) % 3 == 0)
            buf[at++] = ',';
        buf[at++] = digits[i];
    }
    buf[at] = '\0';
    return buf;
}

/* The end of a run: every trace file checked, one summary line (and on a
 * terminal, what to do with the trace).  Returns how many things the
 * traces may be missing. */
static int summarize(const char *output, const memtap_run_status *st,
                     time_t since, const struct timespec *t0,
                     const engine_plan *plan, const trace_launch *l)
{
    int quiet = l->quiet;
    int err = atomic_load(&st->write_errno), ours;
    int problems = check_trace(output, 0, !err, plan, quiet, l->temporary, &ours);
    glob_t g = { 0 };
    size_t candidates = other_traces(output, since, &g), others = 0;
    for (size_t i = 0; i < candidates; i++) {
        problems += check_trace(g.gl_pathv[i], st->run_id, !err, plan, 1,
                                l->temporary, &ours);
        others += (size_t)ours;
        if (ours && l->other)
            l->other(l->hook_arg, g.gl_pathv[i]);
    }
    globfree(&g);
    problems += check_files(output, st, others + (access(output, F_OK) == 0));
    if (err) {
        fprintf(stderr, "memtap: warning: trace %s: %" PRIu64
                        " events lost: %s\n", output,
                (uint64_t)atomic_load(&st->lost), strerror(err));
        problems++;
    }
    char n[32];
    if (l->temporary)
        fprintf(stderr, "memtap: %s events, ", grouped((uint64_t)atomic_load(&st->events), n));
    else
        fprintf(stderr, "memtap: trace %s: %s events, ", output,
                grouped((uint64_t)atomic_load(&st->events), n));
    print_size(stderr, atomic_load(&st->bytes));
    if (others)
        fprintf(stderr, " in %zu files", others + 1);
    fprintf(stderr, ", %.1f s", seconds_since(t0));
    fputs(problems ? " (incomplete)\n" : "\n", stderr);
    if (!quiet && !l->temporary && isatty(STDERR_FILENO))
        fprintf(stderr, "memtap: next: memtap show %s | less; memtap report %s\n",
                output, output);
    return problems;
}

int cli_program_signal;

static int exit_status(const char *prog, int status)
{
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) {
        fprintf(stderr, "memtap: %s: killed by signal %d (%s)\n", prog,
                WTERMSIG(status), strsignal(WTERMSIG(status)));
        cli_program_signal = WTERMSIG(status);
        return 128 + WTERMSIG(status);
    }
    return 1;
}

int cli_run_traced(const engine_plan *plan, const char *out,
                   const trace_launch *l, int *exit_code)
{
    char **prog_argv = plan->argv;
    const char *prog = plan->exec_path;
    status_page sp;
    if (status_open(&sp)) {
        status_close(&sp);
        return 1;
    }
    time_t started = time(NULL);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int progress = !l->quiet && isatty(STDERR_FILENO);
    int status = spawn_and_wait(prog_argv, prog, sp.st, progress, l);
    int rc = 0;
    if (status == -1) {
        rc = cli_error(prog_argv[0], "cannot start: %s", strerror(errno));
    } else {
        *exit_code = exit_status(prog_argv[0], status);
        if (access(out, F_OK) != 0)
            rc = cli_error(prog_argv[0], "no trace was written (the program "
                                         "did not load libmemtap.so)");
    }
    int problems = rc ? 0 : summarize(out, sp.st, started, &t0, plan, l);
    if (status != -1 && l->running)
        l->running(l->hook_arg, NULL);
    status_close(&sp);
    if (problems && WIFEXITED(status) && !l->keep_going) {
        fprintf(stderr, "memtap: %s exited with status %d; the trace is "
                        "incomplete, so memtap exits with status %d "
                        "(--keep-going passes the program's status)\n",
                prog_argv[0], *exit_code, MEMTAP_EXIT_INCOMPLETE);
        *exit_code = MEMTAP_EXIT_INCOMPLETE;
    }
    return rc;
}
