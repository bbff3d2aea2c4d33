/*
 * run_env.c - the MEMTAP_* environment a traced program starts with (the
 * contract with libmemtap.so and the copy cache, sys/env.h), from the
 * options of `memtap run` and the shadow commands: the output, the window,
 * the tool, the consumer, the bypass rules, and the lists of ranges
 * (--tested, --ignore, --watch) turned into addresses.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "sys/env.h"
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

/* One list of a MEMTAP_* variable, built item by item. */
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

/* The list in the environment (unset when empty). */
static void list_set(const env_list *l)
{
    if (l->used)
        setenv(l->env, l->text, 1);
    else
        unsetenv(l->env);
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
static int set_ranges_env(const char *env, const char *opt,
                          const char *const *args, unsigned n, int want_sites,
                          const char *prog)
{
    env_list l = { .env = env };
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
    list_set(&l);
    return 0;
}

int cli_launch_env(const trace_launch *l, const char *prog,
                   const char *preload, const char *abs_out,
                   cache_rules *rules)
{
    cli_prepend_env("LD_PRELOAD", preload);
    setenv(ENV_OUTPUT, abs_out, 1);
    setenv(ENV_ACCESSES, l->heap_only ? "0" : "1", 1);
    setenv(ENV_WINDOW, l->from_main        ? "main"
                            : uses_marks(prog) ? "marks"
                                               : "all",
           1);
    if (l->tool) {
        char chunk[32];
        snprintf(chunk, sizeof chunk, "%u", l->chunk);
        setenv(ENV_TOOL, l->tool, 1);
        setenv(ENV_TOOL_CHUNK, chunk, 1);
        setenv(ENV_TOOL_CHECK_ONCE, l->check_once ? "1" : "0", 1);
    }
    if (l->consumer) {
        char lib[PATH_MAX];
        if (!realpath(l->consumer, lib) || access(lib, R_OK) != 0)
            return cli_error(l->consumer, "%s", strerror(errno));
        setenv(ENV_CONSUMER, lib, 1);
    }
    if (l->compress)
        setenv(ENV_COMPRESS, l->compress, 1);
    if (l->string_elements) /* else the environment's, if any */
        setenv(ENV_STRING_ELEMENTS, "1", 1);
    if (copy_rules(l, prog, rules))
        return 1;
    cache_rules_to_env(rules); /* for the audit module's `memtap cache add` */
    return set_ranges_env(ENV_IGNORE, "--ignore", l->ignore, l->nignore, 0,
                          prog) ||
           set_ranges_env(ENV_WATCH, "--watch", l->watch, l->nwatch, 0,
                          prog) ||
           set_ranges_env(ENV_WATCH_SITES, "--watch", l->watch, l->nwatch, 1,
                          prog);
}
