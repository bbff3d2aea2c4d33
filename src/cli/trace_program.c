/*
 * trace_program.c - tracing a program, as run and the shadow-memory
 * commands do it: finding the program, checking it and the output, the
 * environment and the engine's plan, then its run (run_wait.c).
 */
#define _GNU_SOURCE
#include "cli.h"
#include "sys/run_config.h"
#include "engine.h"
#include "symbols/elfimage.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Refuses what LD_PRELOAD cannot trace.  Scripts pass: their interpreter
 * is traced. */
static int check_program(const char *path)
{
    char head[2] = { 0, 0 };
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return cli_error(path, "%s", strerror(errno));
    ssize_t n = read(fd, head, sizeof head);
    close(fd);
    if (n == 2 && head[0] == '#' && head[1] == '!')
        return 0;
    elf_image *img;
    int rc = elf_image_open(path, &img);
    if (rc != ELF_OK)
        return cli_error(path, "%s", elf_strerror(rc));
    int type = elf_image_type(img), interp = elf_image_has_interp(img);
    int library = elf_image_is_library(img);
    elf_image_close(img);
    if (type != ET_EXEC && type != ET_DYN)
        return cli_error(path, "not an executable");
    if (library)
        return cli_error(path, "a shared library, not a program: run a "
                               "program that loads it (memtap run -- PROG), "
                               "or write an instrumented copy of it with "
                               "memtap instrument");
    if (!interp)
        return cli_error(path, "static executable: neither engine can trace "
                               "it (both need the dynamic loader: "
                               "LD_PRELOAD, LD_AUDIT); link it "
                               "dynamically");
    return 0;
}

/* Whether the regular file at path starts with a trace file's magic. */
static int is_trace_file(const char *path)
{
    char magic[sizeof MEMTAP_TRACE_MAGIC - 1];
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY |
                            O_CLOEXEC);
    if (fd < 0)
        return 0;
    struct stat st;
    int ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
             read(fd, magic, sizeof magic) == (ssize_t)sizeof magic &&
             memcmp(magic, MEMTAP_TRACE_MAGIC, sizeof magic) == 0;
    close(fd);
    return ok;
}

/* Splits out into its directory (resolved) and last component, giving the
 * absolute trace path in abs.  The last component is never resolved. */
static int absolute_output(const char *out, char *abs, size_t cap)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(out, '/');
    const char *base = slash ? slash + 1 : out;
    if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
        return cli_error(out, "not a file name");
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == out)
        snprintf(dir, sizeof dir, "/");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - out), out);
    char *real = realpath(dir, NULL);
    if (!real)
        return cli_error(out, "cannot write the trace: %s", strerror(errno));
    int n = snprintf(abs, cap, "%s/%s", strcmp(real, "/") ? real : "", base);
    free(real);
    if (n < 0 || (size_t)n >= cap)
        return cli_error(out, "path too long");
    return 0;
}

/* Checks that a new trace can go at out.  A trace is only ever created
 * under a new name (the traced process opens it with O_CREAT|O_EXCL,
 * which never follows a symbolic link), so nothing that is there is ever
 * written through: an older trace is kept as OUT.old (as perf does: *older
 * says there is one, keep_older moves it once the run is sure to start),
 * anything else (a symbolic link, a device, a FIFO, a directory, a file
 * that is not a trace) is refused.  The directory must take a new file: a
 * probe file is created and removed, so that an unwritable place is an
 * error before the program runs. */
static int prepare_output(const char *out, char *abs, size_t cap, int *older)
{
    *older = 0;
    if (absolute_output(out, abs, cap))
        return 1;
    struct stat st;
    if (lstat(abs, &st) == 0) {
        if (S_ISLNK(st.st_mode))
            return cli_error(out, "is a symbolic link; memtap writes a trace "
                                  "only under a new name or over an older "
                                  "trace");
        if (!S_ISREG(st.st_mode))
            return cli_error(out, "is not a regular file; memtap writes a "
                                  "trace only under a new name or over an "
                                  "older trace");
        if (!is_trace_file(abs))
            return cli_error(out, "exists and is not a memtap trace "
                                  "(remove it or choose another name)");
        *older = 1;
    } else if (errno != ENOENT) {
        return cli_error(out, "%s", strerror(errno));
    }
    char probe[PATH_MAX + 16];
    snprintf(probe, sizeof probe, "%s.XXXXXX", abs);
    int fd = mkostemp(probe, O_CLOEXEC);
    if (fd < 0)
        return cli_error(out, "cannot write the trace: %s", strerror(errno));
    close(fd);
    unlink(probe);
    return 0;
}

/* The older trace at abs kept as abs.old (prepare_output found it). */
static int keep_older(const char *abs)
{
    char old[PATH_MAX + 8];
    snprintf(old, sizeof old, "%s.old", abs);
    if (rename(abs, old) != 0)
        return cli_error(abs, "cannot keep the older trace as %s: %s", old,
                         strerror(errno));
    cli_note("kept the older trace as %s\n", old);
    return 0;
}

int cli_trace_program(char **prog_argv, const trace_launch *l, char *abs_out,
                      size_t cap, int *exit_code)
{
    char prog[PATH_MAX], preload[PATH_MAX];
    *exit_code = 0;
    if (cli_find_program(prog_argv[0], prog, sizeof prog) != 0) {
        *exit_code = MEMTAP_EXIT_NOT_FOUND;
        return cli_error(prog_argv[0], "no such program");
    }
    if (check_program(prog))
        return 1;
    if (cli_find_library(ENV_PRELOAD, "libmemtap.so", preload,
                         sizeof preload) != 0)
        return cli_error("libmemtap.so", "not found next to the memtap "
                                         "command (set MEMTAP_PRELOAD)");
    int older;
    if (prepare_output(l->output, abs_out, cap, &older))
        return 1;
    cache_rules rules;
    if (cli_launch_env(l, prog, preload, abs_out, &rules))
        return 1;
    engine_plan plan;
    /* heap events alone need no rewriting */
    if (engine_prepare(l->heap_only ? ENGINE_FAULT : l->engine, prog,
                       prog_argv, preload, &rules, l->quiet, &plan))
        return 1;
    if (plan.engine == ENGINE_STATIC) {
        cli_run_config_list(RUN_CONFIG_only, l->only ? l->only : "heap,static");
    } else if (plan.prewritten) {
        if (l->only && !l->only_if_static) /* else all its instrumentation logs */
            cli_run_config_list(RUN_CONFIG_only, l->only);
    } else if (l->only && !l->only_if_static && strcmp(l->only, "heap,static") &&
               strcmp(l->only, "static,heap")) {
        engine_done(&plan);
        return cli_error("--only", "the fault engine records heap and "
                                   "static data, nothing else (--engine "
                                   "static records any choice)");
    } else if ((l->tested || l->ignore_read_only || l->implicit) &&
               !l->heap_only) {
        const char *opt = l->tested             ? "--tested"
                          : l->ignore_read_only ? "--ignore-read-only"
                                                : "--implicit";
        if (l->engine == ENGINE_FAULT) {
            engine_done(&plan);
            return cli_error(opt, "an option of rewritten code: not with "
                                  "--engine fault");
        }
        fprintf(stderr, "memtap: warning: %s: the fault engine traces the "
                        "program: the bypass rules do not apply\n", prog);
    }
    if (older && keep_older(abs_out)) {
        engine_done(&plan);
        return 1;
    }
    int rc = cli_run_traced(&plan, abs_out, l, exit_code);
    engine_done(&plan);
    return rc;
}
