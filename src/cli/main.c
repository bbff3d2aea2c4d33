/*
 * main.c - the memtap command: dispatches to subcommands.
 */
#include "cli.h"

#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/resource.h>

static const char usage[] =
    "usage: memtap <command> [options]\n"
    "\n"
    "memtap traces the memory accesses and dynamic memory of Linux x86-64\n"
    "programs and names them after the program's own source.\n"
    "\n"
    "commands:\n"
    "  run        run a program under memtap and write its trace (.mtr)\n"
    "  show       print a trace as MadT lines, Lackey lines or CSV\n"
    "  export     write a trace's accesses for other tools (Lackey lines,\n"
    "             Dinero IV's input), block operations split at cache lines\n"
    "  report     what a trace says first: hottest objects and instructions,\n"
    "             access patterns, uses after free, the heap, thread sharing\n"
    "             (text, JSON, or an HTML page with interactive charts)\n"
    "  symbolize  name addresses of a traced run (data or code)\n"
    "  info       what a trace holds: process, ending, modules, file state\n"
    "  analyze    which memory instructions selective instrumentation would\n"
    "             instrument in an ELF file, and the accuracy that buys\n"
    "  instrument write a copy of a program whose selected memory\n"
    "             instructions log their accesses (run it with 'memtap run')\n"
    "  accuracy   how much of a run's accesses a selectively instrumented\n"
    "             copy recovers (against a non-selective copy)\n"
    "  cache      the rewritten copies the static engine runs (ls, clear)\n"
    "  heat       run a program and report its hottest data (shadow memory)\n"
    "  share      run a program and report data shared, or falsely shared,\n"
    "             between its threads\n"
    "  uninit     run a program and report reads of heap memory never\n"
    "             written\n"
    "\n"
    "'memtap <command> --help' describes a command's options.\n";

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

/* Ends memtap by the signal the traced program died of, so that shells
 * and CI see a signal death (as valgrind and perf do); 128+N if the signal
 * does not end the process. */
static int die_like_program(int sig, int rc)
{
    struct rlimit no_core = { 0, 0 };
    setrlimit(RLIMIT_CORE, &no_core); /* the program's core is the one */
    fflush(NULL);
    signal(sig, SIG_DFL);
    sigset_t m;
    sigemptyset(&m);
    sigaddset(&m, sig);
    sigprocmask(SIG_UNBLOCK, &m, NULL);
    raise(sig);
    return rc;
}

static int dispatch(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage, stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 ||
        strcmp(cmd, "help") == 0) {
        fputs(usage, stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("memtap %s\n", MEMTAP_VERSION);
        return 0;
    }
    if (strcmp(cmd, "run") == 0)
        return cmd_run(argc - 1, argv + 1);
    if (strcmp(cmd, "report") == 0)
        return cmd_report(argc - 1, argv + 1);
    if (strcmp(cmd, "info") == 0)
        return cmd_info(argc - 1, argv + 1);
    if (strcmp(cmd, "symbolize") == 0)
        return cmd_symbolize(argc - 1, argv + 1);
    if (strcmp(cmd, "analyze") == 0)
        return cmd_analyze(argc - 1, argv + 1);
    if (strcmp(cmd, "heat") == 0 || strcmp(cmd, "share") == 0 ||
        strcmp(cmd, "uninit") == 0)
        return cmd_shadow(argc - 1, argv + 1);
    if (strcmp(cmd, "accuracy") == 0)
        return cmd_accuracy(argc - 1, argv + 1);
    if (strcmp(cmd, "instrument") == 0)
        return cmd_instrument(argc - 1, argv + 1);
    if (strcmp(cmd, "cache") == 0)
        return cmd_cache(argc - 1, argv + 1);
    if (strcmp(cmd, "show") == 0)
        return cmd_show(argc - 1, argv + 1);
    if (strcmp(cmd, "export") == 0)
        return cmd_export(argc - 1, argv + 1);
    cli_error(cmd, "unknown command (try 'memtap --help')");
    return 2;
}

int main(int argc, char **argv)
{
    int rc = dispatch(argc, argv);
    return cli_program_signal ? die_like_program(cli_program_signal, rc) : rc;
}
