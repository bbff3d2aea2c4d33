/*
 * select_opts.c - the options of selective instrumentation that analyze
 * and instrument share (--omega, --chunk, the bypass rules, --tested
 * ranges), parsed into select_params.
 */
#define _GNU_SOURCE
#include "cli.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "rewrite/rewrite.h"

int cli_parse_u64(const char *s, int base, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, base);
    if (errno || end == s || *end || *s == '-')
        return -1;
    *out = v;
    return 0;
}

/* The --ignore and --tested=LIST arguments, until the file they name
 * ranges of is known. */
static const char *ignore_args[SELECT_IGNORE_MAX];
static const char *tested_args[SELECT_IGNORE_MAX];
static unsigned ntested_args;

/* The ranges of the comma-separated items of list (A-B or SYMBOL of file)
 * appended to r[*n]; 0, or 1 after printing an error. */
static int parse_range_list(const char *opt, const char *list,
                            const char *file, select_range *r, unsigned *n)
{
    while (*list) {
        size_t len = strcspn(list, ",");
        char item[256];
        if (len >= sizeof item)
            return cli_error(opt, "'%.*s': too long", (int)len, list);
        if (*n == SELECT_IGNORE_MAX)
            return cli_error(opt, "at most %d ranges", SELECT_IGNORE_MAX);
        memcpy(item, list, len);
        item[len] = '\0';
        if (len && cli_parse_range(opt, item, file, &r[*n].lo, &r[*n].hi))
            return 1;
        *n += len != 0;
        list += len + (list[len] == ',');
    }
    return 0;
}

int cli_select_ranges(select_params *p, const char *file)
{
    for (unsigned i = 0; i < p->nignore; i++)
        if (cli_parse_range("--ignore", ignore_args[i], file, &p->ignore[i].lo,
                             &p->ignore[i].hi))
            return 1;
    if (p->nignore)
        p->bypass |= BYPASS_IGNORED;
    p->ntested = 0;
    for (unsigned i = 0; i < ntested_args; i++)
        if (parse_range_list("--tested", tested_args[i], file, p->tested,
                             &p->ntested))
            return 1;
    return 0;
}

int cli_select_option(int c, const char *arg, select_params *p)
{
    char *end;
    unsigned only;
    switch (c) {
    case 'O':
        if (cli_parse_only(arg, &only))
            return cli_bad_option("--only", "'%s': expected a comma-separated "
                                            "list of heap, static and stack", arg);
        p->bypass = (p->bypass & ~(unsigned)(BYPASS_STACK | BYPASS_STATIC)) |
                    only;
        return 0;
    case 'R':
        p->bypass |= BYPASS_READ_ONLY;
        return 0;
    case 'M':
        p->implicit = 1;
        return 0;
    case 'L': /* --tested: the whole file; --tested=LIST: its ranges */
        p->bypass |= BYPASS_LOADS;
        if (arg && ntested_args == SELECT_IGNORE_MAX)
            return cli_bad_option("--tested", "at most %d lists", SELECT_IGNORE_MAX);
        if (arg)
            tested_args[ntested_args++] = arg;
        return 0;
    case 'I': /* resolved once the file is known (cli_select_ranges) */
        if (p->nignore == SELECT_IGNORE_MAX)
            return cli_bad_option("--ignore", "at most %d ranges", SELECT_IGNORE_MAX);
        ignore_args[p->nignore++] = arg;
        return 0;
    case 'w':
        p->omega = strtod(arg, &end);
        if (end == arg || *end)
            return cli_bad_option("--omega", "not a number: %s", arg);
        return 0;
    case 'c':
        if (cli_parse_u64(arg, 0, &p->chunk))
            return cli_bad_option("--chunk", "not a size: %s", arg);
        return 0;
    case 's':
        if (sscanf(arg, "%u,%u,%u", &p->scores.s1, &p->scores.s2,
                   &p->scores.s3) != 3)
            return cli_bad_option("--scores", "expected S1,S2,S3");
        return 0;
    default: /* 'n' */
        p->nonselective = 1;
        return 0;
    }
}
