/*
 * cli.h - shared pieces of the memtap command: subcommand entry points and
 * error reporting in the form "memtap: <what>: <why>".
 */
#ifndef MEMTAP_CLI_H
#define MEMTAP_CLI_H

#include <stdio.h>

#include "report/render.h"

int cmd_run(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_symbolize(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_analyze(int argc, char **argv);

/* Prints "memtap: <what>: <why>" to stderr; returns 1 (exit status). */
int cli_error(const char *what, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Parses "madt", "lackey" or "csv"; returns -1 otherwise. */
int cli_parse_format(const char *s);

/* Opens a trace, printing the error; returns 0 or 1. */
int cli_open_trace(const char *path, memtap_trace **t);

/* Streams the trace at path to out in the given rendering.  Returns 0, or
 * 1 after printing an error. */
int cli_render_trace(const char *path, const render_options *opt, FILE *out);

#endif
