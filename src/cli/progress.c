/*
 * progress.c - the progress line of long walks over a trace (show,
 * export): on a terminal only, from the first second on, rewritten in
 * place at most ten times a second, cleared at the end.
 */
#include "cli.h"

#include <inttypes.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

void cli_progress_start(cli_progress *p, const char *what, uint64_t total,
                        FILE *out, int quiet)
{
    p->what = what;
    p->total = total;
    p->done = 0;
    p->shown = 0;
    /* stderr a terminal, and the lines themselves not on it */
    p->on = !quiet && total > 0 && isatty(STDERR_FILENO) &&
            !(out && isatty(fileno(out)));
    p->start = p->last = now();
}

void cli_progress_tick(cli_progress *p)
{
    double t = now();
    if (t - p->start < 1.0 || t - p->last < 0.1)
        return;
    p->last = t;
    p->shown = 1;
    double share = p->done < p->total ? (double)p->done / (double)p->total
                                      : 1.0;
    fprintf(stderr, "\rmemtap: %s: %3.0f%% (%" PRIu64 " of %" PRIu64
                    " events), %.0f s\033[K",
            p->what, 100.0 * share, p->done, p->total, t - p->start);
    fflush(stderr);
}

void cli_progress_end(cli_progress *p)
{
    if (p->shown)
        fputs("\r\033[K", stderr);
    p->shown = 0;
}

void cli_progress_records(void *p, uint64_t n) { cli_progress_steps(p, n); }
