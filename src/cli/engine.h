/*
 * engine.h - which engine traces a run, and what the static engine needs
 * before the program starts: rewritten copies of the program and of the
 * libraries it loads (memtap's cache), the loader audit module that loads
 * the copies, and after the run, what it did not cover.
 */
#ifndef MEMTAP_CLI_ENGINE_H
#define MEMTAP_CLI_ENGINE_H

#include <limits.h>

#include "cache/cache.h"
#include "cli.h"
#include "memtap/trace.h"

typedef enum engine_kind { ENGINE_FAULT, ENGINE_STATIC, ENGINE_AUTO } engine_kind;

/* "fault", "static" or "auto"; -1 for anything else. */
int engine_parse(const char *name);

typedef struct engine_plan {
    engine_kind engine;        /* ENGINE_STATIC or ENGINE_FAULT */
    int prewritten;            /* the program is a copy memtap instrument
                                  wrote: run as it is, its own runtime */
    char exec_path[PATH_MAX];  /* what to execute */
    char **argv;               /* with what arguments (a script's are
                                  rebuilt for its interpreter's copy) */
    char **owned_argv;         /* argv when rebuilt, to free */
    cache cache;
} engine_plan;

/* Chooses the engine for the program at path (argv its arguments, argv[0]
 * included), with preload the libmemtap.so in use.  For the static
 * engine, fills the cache with copies made by rules and sets the audit
 * environment.  Returns 0, or 1 after printing an error. */
int engine_prepare(engine_kind want, const char *path, char **argv,
                   const char *preload, const cache_rules *rules, int quiet,
                   engine_plan *plan);

/* After the run: says which modules of trace t (read from trace_path)
 * were traced and warns about each one that was not.  Returns how many
 * were not. */
int engine_report(const engine_plan *plan, const char *trace_path,
                  memtap_trace *t, int quiet);

void engine_done(engine_plan *plan);

/* Runs the program of plan, traced into out, and waits for it, with
 * the status page set up; *exit_code gets what memtap exits with.  0, or 1
 * after an error (run_wait.c). */
int cli_run_traced(const engine_plan *plan, const char *out,
                   const trace_launch *l, int *exit_code);

#endif
