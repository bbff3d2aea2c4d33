/*
 * run_env.c - the MEMTAP_* environment a traced program starts with (the
 * contract with libmemtap.so and the copy cache, sys/env.h): the run's
 * run_config, each row put into its variable as sys/run_config.h's table
 * encodes it (libmemtap.so decodes it by the same table), filled from the
 * options of `memtap run` and the shadow commands: the output, the window,
 * the tool, the consumer, the bypass rules, and the lists of ranges
 * (--tested, --ignore, --watch) turned into addresses.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "sys/env.h"
#include "sys/run_config.h"
#include "cache/cache.h"

#include "analysis/select.h"
#include "symbols/elfimage.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static run_config run;

run_config *cli_run_config(void)
{
    return &run;
}

static void put_number(const char *env, long long n)
{
    char v[32];
    snprintf(v, sizeof v, "%lld", n);
    setenv(env, v, 1);
}

/* The i-th of the '|'-separated words (the first when there are fewer). */
static void put_word(const char *env, const char *words, int i)
{
    const char *w = words;
    for (int k = 0; k < i && strchr(w, '|'); k++)
        w = strchr(w, '|') + 1;
    char v[64];
    snprintf(v, sizeof v, "%.*s", (int)strcspn(w, "|"), w);
    setenv(env, v, 1);
}

static void put_or_unset(const char *env, const char *v)
{
    if (v)
        setenv(env, v, 1);
    else
        unsetenv(env);
}

#define ENCODE_TEXT(f, env, a) setenv(env, run.f, 1);
#define ENCODE_LIST(f, env, a) put_or_unset(env, run.f);
#define ENCODE_FLAG(f, env, a) setenv(env, run.f ? "1" : "0", 1);
#define ENCODE_LEAD1(f, env, a) ENCODE_FLAG(f, env, a)
#define ENCODE_SET(f, env, a) put_or_unset(env, run.f ? "1" : NULL);
#define ENCODE_NUM(f, env, a) put_number(env, run.f);
#define ENCODE_FD(f, env, a) \
    if (run.f < 0)           \
        unsetenv(env);       \
    else                     \
        put_number(env, run.f);
#define ENCODE_SIZE(f, env, a) ENCODE_FD(f, env, a)
#define ENCODE_WORDS(f, env, a) put_word(env, a, run.f);
#define ENCODE(kind, f, env, a, b) \
    case RUN_CONFIG_##f:           \
        ENCODE_##kind(f, env, a) break;

/* The variable that carries row. */
static const char *env_of(int row)
{
#define ENV_NAME(kind, f, env, a, b) [RUN_CONFIG_##f] = env,
    static const char *const names[RUN_CONFIG_NROWS] = { RUN_CONFIG_ROWS(ENV_NAME) };
#undef ENV_NAME
    return row >= 0 && row < RUN_CONFIG_NROWS ? names[row] : "";
}

void cli_run_config_put(int row)
{
    switch (row) {
        RUN_CONFIG_ROWS(ENCODE)
    default:
        break;
    }
}

/* A LIST row's text (NULL: none), kept in the row's own storage. */
static void list_row(const char **field, char *text, size_t cap, const char *v)
{
    *field = v && *v && snprintf(text, cap, "%s", v) < (int)cap ? text : NULL;
}
#define LIST_CASE_LIST(f)                                            \
    case RUN_CONFIG_##f:                                             \
        list_row(&run.f, run.f##_text, sizeof run.f##_text, value); \
        break;
#define LIST_CASE_TEXT(f)
#define LIST_CASE_FLAG(f)
#define LIST_CASE_LEAD1(f)
#define LIST_CASE_SET(f)
#define LIST_CASE_NUM(f)
#define LIST_CASE_FD(f)
#define LIST_CASE_SIZE(f)
#define LIST_CASE_WORDS(f)
#define LIST_CASE(kind, f, env, a, b) LIST_CASE_##kind(f)

void cli_run_config_list(int row, const char *value)
{
    switch (row) {
        RUN_CONFIG_ROWS(LIST_CASE)
    default:
        break;
    }
    cli_run_config_put(row);
}

/* Whether the program calls memtap_start() (its dynamic symbols name it). */
static int uses_marks(const char *path)
{
    elf_image *img;
    if (elf_image_open(path, &img) != ELF_OK)
        return 0;
    int found = elf_image_imports(img, "memtap_start");
    elf_image_close(img);
    return found;
}

/* One list of a MEMTAP_* variable (for its errors), built item by item. */
typedef struct env_list {
    const char *env;
    char text[ENV_TESTED_MAX];
    size_t used;
} env_list;

/* Adds [lo, hi) to the list: as "PROGRAM@LO-HI" in the link-time
 * addresses of the program at real, or with real NULL as run-time "LO-HI";
 * or, with word, the word as it is.  0, or 1 after printing an error. */
static int list_add(env_list *l, const char *real, uint64_t lo, uint64_t hi,
                    const char *word)
{
    const char *sep = l->used ? "," : "";
    size_t room = sizeof l->text - l->used;
    int k = word ? snprintf(l->text + l->used, room, "%s%s", sep, word)
                 : snprintf(l->text + l->used, room,
                            "%s%s%s0x%" PRIx64 "-0x%" PRIx64, sep,
                            real ? real : "", real ? "@" : "", lo, hi);
    if (k < 0 || (size_t)k >= room)
        return cli_error(l->env, "too long a list");
    l->used += (size_t)k;
    return 0;
}

/* The program's path as the list names it. */
static void real_path(const char *prog, char *real)
{
    if (!realpath(prog, real))
        snprintf(real, PATH_MAX, "%s", prog);
}

/* The --tested list's items as copy_rules says.  0, or 1 after printing
 * an error. */
static int tested_list(const char *tested, const char *prog, env_list *out)
{
    env_list l = { .env = ENV_TESTED };
    char real[PATH_MAX], item[256];
    unsigned ranges = 0;
    real_path(prog, real);
    for (const char *s = tested ? tested : ""; *s;) {
        size_t len = strcspn(s, ",");
        if (len >= sizeof item)
            return cli_error("--tested", "'%.*s': too long", (int)len, s);
        memcpy(item, s, len);
        item[len] = '\0';
        s += len + (s[len] == ',');
        uint64_t lo, hi;
        int range = cli_is_range(item);
        int rc = range ? cli_parse_range("--tested", item, prog, &lo, &hi)
                       : cli_function_range(prog, item, &lo, &hi);
        if (rc < 0 || (rc && range))
            return 1;
        if (!rc && ++ranges > SELECT_IGNORE_MAX)
            return cli_error("--tested", "at most %d ranges",
                             SELECT_IGNORE_MAX);
        if (list_add(&l, real, lo, hi, rc ? item : NULL))
            return 1;
    }
    *out = l;
    return 0;
}

/* The rules the static engine's copies are rewritten with: what --only
 * leaves out, --ignore-read-only, --implicit, and the --tested list: a
 * range A-B (of the program's link-time addresses) or a function of the
 * program as "PROGRAM@LO-HI", anything else as the base name of a
 * module.  0, or 1 after printing an error. */
static int copy_rules(const trace_launch *l, const char *prog, cache_rules *r)
{
    memset(r, 0, sizeof *r);
    cli_parse_only(l->only ? l->only : "heap,static", &r->bypass);
    if (l->ignore_read_only)
        r->bypass |= BYPASS_READ_ONLY;
    r->implicit = l->implicit;
    env_list list = { .env = ENV_TESTED };
    if (tested_list(l->tested, prog, &list))
        return 1;
    snprintf(r->tested, sizeof r->tested, "%s", list.text);
    return 0;
}

/* One list of ranges for env (of option opt): ranges as they are (run-time
 * addresses), symbols (or, with sites, allocation sites) as
 * "PROGRAM@LO-HI" in the program's link-time addresses; want_sites picks
 * the arguments with a '@' (sites) or those without.  0, or 1 after
 * printing an error. */
static int set_ranges_env(int row, const char *opt, const char *const *args,
                          unsigned n, int want_sites, const char *prog)
{
    env_list l = { .env = env_of(row) };
    char real[PATH_MAX];
    real_path(prog, real);
    for (unsigned i = 0; i < n; i++) {
        int site = strchr(args[i], '@') != NULL;
        if (site != want_sites)
            continue;
        uint64_t lo, hi;
        if (site ? cli_parse_site(args[i], prog, &lo, &hi)
                 : cli_parse_range(opt, args[i], prog, &lo, &hi))
            return 1;
        int absolute = !site && cli_is_range(args[i]);
        if (list_add(&l, absolute ? NULL : real, lo, hi, NULL))
            return 1;
    }
    cli_run_config_list(row, l.text);
    return 0;
}

int cli_launch_env(const trace_launch *l, const char *prog,
                   const char *preload, const char *abs_out,
                   cache_rules *rules)
{
    cli_prepend_env("LD_PRELOAD", preload);
    snprintf(run.output, sizeof run.output, "%s", abs_out);
    run.accesses = !l->heap_only;
    run.window = l->from_main ? WINDOW_MAIN : uses_marks(prog) ? WINDOW_MARKS : WINDOW_ALL;
    cli_run_config_put(RUN_CONFIG_output);
    cli_run_config_put(RUN_CONFIG_accesses);
    cli_run_config_put(RUN_CONFIG_window);
    if (l->tool) {
        snprintf(run.tool, sizeof run.tool, "%s", l->tool);
        run.tool_chunk = l->chunk;
        run.check_once = l->check_once;
        cli_run_config_put(RUN_CONFIG_tool);
        cli_run_config_put(RUN_CONFIG_tool_chunk);
        cli_run_config_put(RUN_CONFIG_check_once);
    }
    if (l->consumer) {
        if (!realpath(l->consumer, run.consumer) || access(run.consumer, R_OK) != 0)
            return cli_error(l->consumer, "%s", strerror(errno));
        cli_run_config_put(RUN_CONFIG_consumer);
    }
    if (l->compress) {
        snprintf(run.compress, sizeof run.compress, "%s", l->compress);
        cli_run_config_put(RUN_CONFIG_compress);
    }
    if (l->stack_depth >= 0) {
        run.stack_depth = l->stack_depth;
        cli_run_config_put(RUN_CONFIG_stack_depth);
    }
    if (l->string_elements) { /* else the environment's, if any */
        run.string_elements = 1;
        cli_run_config_put(RUN_CONFIG_string_elements);
    }
    if (copy_rules(l, prog, rules))
        return 1;
    cache_rules_to_env(rules); /* for the audit module's `memtap cache add` */
    return set_ranges_env(RUN_CONFIG_ignore, "--ignore", l->ignore, l->nignore, 0,
                          prog) ||
           set_ranges_env(RUN_CONFIG_watch, "--watch", l->watch, l->nwatch, 0, prog) ||
           set_ranges_env(RUN_CONFIG_watch_sites, "--watch", l->watch, l->nwatch, 1,
                          prog);
}
