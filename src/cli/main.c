/*
 * main.c - the memtap command: dispatches to subcommands, from the
 * command table (commands.def), which the usage is printed from too.
 */
#include "cli.h"

#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/resource.h>

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
#define COMMAND(name, fn, summary) { #name, fn, summary },
#include "commands.def"
#undef COMMAND
};
#define NCOMMANDS (sizeof commands / sizeof *commands)

static void usage(FILE *out)
{
    fputs("usage: memtap <command> [options]\n"
          "\n"
          "memtap traces the memory accesses and dynamic memory of Linux x86-64\n"
          "programs and names them after the program's own source.\n"
          "\n"
          "commands:\n", out);
    for (size_t i = 0; i < NCOMMANDS; i++) {
        const char *line = commands[i].summary;
        fprintf(out, "  %-10s ", commands[i].name);
        for (const char *nl; (nl = strchr(line, '\n')); line = nl + 1)
            fprintf(out, "%.*s\n%13s", (int)(nl - line), line, "");
        fprintf(out, "%s\n", line);
    }
    fputs("\n'memtap <command> --help' describes a command's options;\n"
          "'memtap -V' (--version) says which memtap this is.\n"
          "\n"
          "exit status: a command's own (memtap run: the program's), 2 when\n"
          "used wrongly, 127 when the program to run is not found, 1 when\n"
          "memtap fails, 125 when a traced program's trace may be\n"
          "incomplete.\n", out);
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
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 ||
        strcmp(cmd, "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
        printf("memtap %s\n", MEMTAP_VERSION);
        return 0;
    }
    if (strcmp(cmd, "--commands") == 0) { /* for the shell's completion */
        for (size_t i = 0; i < NCOMMANDS; i++)
            puts(commands[i].name);
        return 0;
    }
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(cmd, commands[i].name) == 0) {
            static char name[64];
            snprintf(name, sizeof name, "memtap %s", commands[i].name);
            cli_command = argv[1] = name; /* getopt's "memtap run: ..." */
            return commands[i].run(argc - 1, argv + 1);
        }
    cli_error(cmd, "unknown command (try 'memtap --help')");
    return 2;
}

int main(int argc, char **argv)
{
    int rc = dispatch(argc, argv);
    return cli_program_signal ? die_like_program(cli_program_signal, rc) : rc;
}
