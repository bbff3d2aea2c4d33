/*
 * cmd_info.c - "memtap info": what a trace file holds: the process, how it
 * ended, its modules, and the state of the file itself.
 */
#include "cli.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: memtap info TRACE.mtr\n"
    "\n"
    "Prints the trace's notes (process, arguments, how it ended, events\n"
    "lost), its module table (load address, build-id, path) and the state\n"
    "of the file (chunks, events, truncation, damage).\n"
    "\n"
    "  -h, --help    show this help\n";

/* key: value up to its line's end, its control characters as \xNN (a
 * crafted trace's must not reach the terminal). */
static void print_value(const char *key, const char *v)
{
    printf("%s: ", key);
    for (; *v && *v != '\n'; v++) {
        unsigned char c = (unsigned char)*v;
        if (c < 0x20 || c == 0x7f)
            printf("\\x%02x", c);
        else
            putchar(c);
    }
    putchar('\n');
}

int cmd_info(int argc, char **argv)
{
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 ||
                      strcmp(argv[1], "-h") == 0)) {
        fputs(usage, stdout);
        return 0;
    }
    if (argc != 2 || argv[1][0] == '-')
        return cli_usage_error(usage);
    memtap_trace *t;
    if (cli_open_trace(argv[1], &t))
        return 1;
    const memtap_file_header *h = memtap_trace_header(t);
    const memtap_trace_health *hl = memtap_trace_get_health(t);
    printf("format: %u\npid: %u\nppid: %u\n", h->version, h->pid, h->ppid);
    printf("chunks: %" PRIu64 "\nevents: %" PRIu64 "\n", hl->chunks,
           hl->events);
    printf("truncated: %s\ncorrupt_chunks: %" PRIu64 "\n",
           hl->truncated ? "yes" : "no", hl->corrupt_chunks);
    uint64_t us = memtap_trace_duration_us(t);
    if (us) /* traces before chunks had times have none */
        printf("duration_us: %" PRIu64 "\n", us);
    static const char *const keys[] = { "exe", "argc", "parent_trace",
                                        "fork_seq", "end", "end_code", "end_pc",
                                        "end_seq", "dropped", "faults",
                                        "faults_completed", "stack_pages",
                                        "code_pages", "hot_sites",
                                        "hot_followers", "hot_accesses",
                                        "hot_untraced", "hot_refused",
                                        "hot_unpatched", "alias_pages_made",
                                        "alias_pages_restored",
                                        "alias_pages_forgotten", "alias_failed",
                                        "exposed_windows", "exposed_first",
                                        "syscalls_emulated", "syscalls_reopened",
                                        "signals_merged", "write_errno",
                                        "tool", "shadow_units",
                                        "shadow_relocations",
                                        "shadow_table_bytes",
                                        "shadow_resident_bytes",
                                        "run", "rewritten_modules",
                                        "rewritten_refused",
                                        "rewritten_traps_hit",
                                        "rewritten_past_leader",
                                        "rewritten_restarts",
                                        "rewritten_entries",
                                        "rewritten_checks_removed",
                                        "rewritten_bypassed",
                                        "code_made", "code_made_first",
                                        "async_io_refused",
                                        "writer_chunks", "writer_jobs", "follow_waits" };
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        const char *v = memtap_trace_info(t, keys[i]);
        if (v && strcmp(keys[i], "write_errno") == 0)
            printf("write_error: %s\n", strerror(atoi(v)));
        else if (v)
            print_value(keys[i], v);
    }
    for (size_t i = 0; i < memtap_trace_module_count(t); i++) {
        const memtap_module *m = memtap_trace_module_at(t, i);
        printf("module %u: 0x%" PRIx64 " ", m->id, m->base);
        for (size_t k = 0; k < m->build_id_len; k++)
            printf("%02x", m->build_id[k]);
        printf("%s%s\n", m->build_id_len ? " " : "- ", m->path);
    }
    memtap_trace_close(t);
    return 0;
}
