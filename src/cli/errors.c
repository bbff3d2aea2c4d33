/*
 * errors.c - the command line's one way of saying what went wrong:
 * "memtap: <what>: <why>" on standard error.
 */
#include "cli.h"

#include <stdarg.h>
#include <stdio.h>

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
