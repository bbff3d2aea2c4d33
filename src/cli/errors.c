/*
 * errors.c - the command line's one way of saying what went wrong:
 * "memtap: <what>: <why>" on standard error; and of a command used
 * wrongly: its synopsis and where its help is, exit status 2.
 */
#include "cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *cli_command = "memtap";
int cli_quiet;

void cli_note(const char *fmt, ...)
{
    if (cli_quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("memtap: note: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
}

int cli_usage_error(const char *usage)
{
    const char *end = strstr(usage, "\n\n"); /* the synopsis ends there */
    fwrite(usage, 1, end ? (size_t)(end - usage) + 1 : strlen(usage), stderr);
    fprintf(stderr, "Try '%s --help' for more.\n", cli_command);
    return 2;
}

int cli_bad_option(const char *option, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: %s: ", cli_command, option);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 2;
}

int cli_error(const char *what, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "memtap: %s: ", what);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 1;
}
