/*
 * cmd_cache.c - "memtap cache": the rewritten copies the static engine
 * runs (listing, clearing, trimming, adding).
 */
#define _GNU_SOURCE
#include "cli.h"

#include "cache/cache.h"
#include "sys/size.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <string.h>

static const char usage[] =
    "usage: memtap cache ls|clear|dir\n"
    "       memtap cache trim [SIZE]\n"
    "       memtap cache add [-q] FILE...\n"
    "\n"
    "The static engine (memtap run --engine static or auto) runs rewritten\n"
    "copies of a program and of the libraries it loads, made on first use\n"
    "and kept in memtap's cache: $MEMTAP_CACHE_DIR, else\n"
    "$XDG_CACHE_HOME/memtap, else ~/.cache/memtap.  A copy is named by its\n"
    "original's identity (device, inode, size, modification time) and by\n"
    "memtap's build: a changed file, or another memtap, gets a new copy.\n"
    "Making a copy trims the cache to $MEMTAP_CACHE_MAX (bytes, or with K,\n"
    "M or G; 0: no limit; default 10G): the copies used longest ago go\n"
    "first, never one used within the last hour.\n"
    "\n"
    "  ls                 the copies (size, copy <- original) and the files\n"
    "                     the rewriter refused, with the reason; on stderr\n"
    "                     what the copies take and the limit\n"
    "  clear              removes them all\n"
    "  trim [SIZE]        removes the copies used longest ago until the\n"
    "                     cache takes at most SIZE (default its limit)\n"
    "  dir                prints the cache directory\n"
    "  add FILE...        rewrites FILEs into the cache now (what a run\n"
    "                     does on first use)\n"
    "  --dir DIR          another cache directory\n"
    "  -q, --quiet        add: say nothing when it works\n"
    "  -h, --help         show this help\n";

static int trim(const cache *c, const char *size, int quiet)
{
    uint64_t max = c->max_bytes ? c->max_bytes : UINT64_MAX; /* 0: none */
    if (size && size_parse(size, &max) != 0)
        return cli_error(size, "expected a size (bytes, or with K, M or G)");
    cache_trim_result t;
    if (cache_trim(c, max, &t) != 0)
        return cli_error(c->dir, "%s", strerror(errno));
    if (!quiet)
        printf("removed %zu copies (%" PRIu64 " MiB) from %s; it takes "
               "%" PRIu64 " MiB\n", t.removed, t.freed >> 20, c->dir,
               t.left >> 20);
    return 0;
}

static int add(const cache *c, char **files, int n, int quiet)
{
    int rc = 0;
    for (int i = 0; i < n; i++) {
        char copy[PATH_MAX], why[512];
        cache_result r = cache_get(c, files[i], copy, sizeof copy, why,
                                   sizeof why);
        if (r == CACHE_REFUSED || r == CACHE_ERROR)
            rc = cli_error(files[i], "not rewritten: %s", why);
        else if (!quiet)
            printf("%s %s\n", r == CACHE_HIT ? "cached" : "rewrote", copy);
    }
    return rc;
}

int cmd_cache(int argc, char **argv)
{
    static const struct option longs[] = {
        { "dir", required_argument, NULL, 'd' },
        { "quiet", no_argument, NULL, 'q' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *dir = NULL;
    int quiet = 0, c;
    while ((c = getopt_long(argc, argv, "qh", longs, NULL)) != -1) {
        switch (c) {
        case 'd': dir = optarg; break;
        case 'q': quiet = 1; cli_quiet = 1; break;
        case 'h': fputs(usage, stdout); return 0;
        default: return cli_usage_error(usage);
        }
    }
    if (optind >= argc)
        return cli_usage_error(usage);
    const char *what = argv[optind++];
    cache ch;
    cache_rules rules; /* add: the traced run's, through its environment */
    cache_rules_from_env(&rules);
    char err[512];
    if (cache_open(&ch, dir, &rules, err, sizeof err) != 0)
        return cli_error("cache", "%s", err);
    if (strcmp(what, "add") == 0 && optind < argc)
        return add(&ch, argv + optind, argc - optind, quiet);
    if (strcmp(what, "trim") == 0 && argc - optind <= 1)
        return trim(&ch, optind < argc ? argv[optind] : NULL, quiet);
    if (optind != argc)
        return cli_usage_error(usage);
    if (strcmp(what, "dir") == 0) {
        printf("%s\n", ch.dir);
    } else if (strcmp(what, "ls") == 0) {
        uint64_t bytes;
        size_t n = cache_list(&ch, stdout, &bytes);
        if (!quiet && ch.max_bytes)
            fprintf(stderr, "memtap: %zu copies in %s, %" PRIu64 " MiB (it is "
                            "trimmed to %" PRIu64 " MiB)\n", n, ch.dir,
                    bytes >> 20, ch.max_bytes >> 20);
        else if (!quiet)
            fprintf(stderr, "memtap: %zu copies in %s, %" PRIu64 " MiB\n", n,
                    ch.dir, bytes >> 20);
    } else if (strcmp(what, "clear") == 0) {
        long n = cache_clear(&ch);
        if (n < 0)
            return cli_error(ch.dir, "%s", strerror(errno));
        if (!quiet)
            printf("removed %ld files from %s\n", n, ch.dir);
    } else 
        return cli_usage_error(usage);
    return 0;
}
