/*
 * cache_opts.c - the cache geometry options that cachesim and export
 * take (--D1 and --LL, Cachegrind's SIZE,ASSOC,LINE), with this machine's
 * caches, from sysfs, for the ones not given.
 */
#include "cli.h"

#include <getopt.h>

int cli_cache_option(cli_cache *c, int opt, const char *arg)
{
    int d1 = opt == CLI_OPT_D1;
    if (cache_geometry_parse(arg, d1 ? &c->d1 : &c->ll) != 0)
        return cli_bad_option(d1 ? "--D1" : "--LL", "not SIZE,ASSOC,LINE of a cache: %s",
                              arg);
    *(d1 ? &c->given_d1 : &c->given_ll) = 1;
    return 0;
}

int cli_cache_finish(cli_cache *c, const char *what)
{
    cache_geometry d1, ll;
    if ((!c->given_d1 || !c->given_ll) && cache_geometry_of_machine(&d1, &ll) == 0) {
        if (!c->given_d1)
            c->d1 = d1;
        if (!c->given_ll)
            c->ll = ll;
    }
    if (c->d1.line != c->ll.line)
        return cli_error(what, "the levels' lines differ (%u and %u bytes)", c->d1.line,
                         c->ll.line);
    return 0;
}
