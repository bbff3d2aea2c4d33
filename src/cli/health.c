/*
 * health.c - what the command says about a trace that may be incomplete:
 * one warning per thing memtap knows is missing (a file cut short, damaged
 * chunks, no end record, records dropped, windows other threads could run
 * into), and notes on what took slow paths.  `run` and `show` say the
 * same.
 */
#include "cli.h"

#include "cache/cache.h"
#include "rewrite/rewrite.h"
#include "rewrite/verify.h"
#include "rt/abi.h"
#include "trace/info.h"

#include <inttypes.h>
#include <signal.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cli_info_value(const memtap_trace *t, const char *key, char *buf,
                    size_t cap)
{
    trace_info_copy(t, key, buf, cap);
}

static uint64_t info_u64(const memtap_trace *t, const char *key)
{
    char v[32];
    cli_info_value(t, key, v, sizeof v);
    return strtoull(v, NULL, 10);
}

/* The note "PATH: N WHAT" when the trace's counter `key` is not 0. */
static void count_note(const memtap_trace *t, const char *path,
                       const char *key, const char *what)
{
    uint64_t n = info_u64(t, key);
    if (n)
        cli_note("%s: %" PRIu64 " %s\n", path, n, what);
}

/* pc as MODULE+0xOFFSET (its file's address) by the trace's module
 * table, or as an address. */
static void where_in_modules(const memtap_trace *t, uint64_t pc, char *out,
                             size_t cap)
{
    for (size_t i = 0; i < memtap_trace_module_count(t); i++) {
        const memtap_module *m = memtap_trace_module_at(t, i);
        for (size_t k = 0; k < m->nsegs; k++) {
            uint64_t start = m->base + m->segs[k].vaddr;
            if (pc >= start && pc < start + m->segs[k].memsz) {
                const char *base = strrchr(m->path, '/');
                snprintf(out, cap, "%s+0x%" PRIx64, base ? base + 1 : m->path,
                         pc - m->base);
                return;
            }
        }
    }
    snprintf(out, cap, "0x%" PRIx64, pc);
}

/* The rewritten module whose loaded bytes hold pc, or NULL. */
static const memtap_module *rewritten_at(const memtap_trace *t, uint64_t pc)
{
    for (size_t i = 0; i < memtap_trace_module_count(t); i++) {
        const memtap_module *m = memtap_trace_module_at(t, i);
        for (size_t k = 0; k < m->nsegs; k++) {
            uint64_t start = m->base + m->segs[k].vaddr;
            if ((m->flags & MEMTAP_MODF_REWRITTEN) && pc >= start &&
                pc < start + m->segs[k].memsz)
                return m;
        }
    }
    return NULL;
}

/* A process that died of a fault (end_pc) in code the static engine
 * changed: memtap's fault, said as such (what to do, what to report).
 * Returns whether it was. */
static int blame(const char *path, const memtap_trace *t, int sig,
                 const cache *copies)
{
    char pcs[32], why[512], copy[PATH_MAX], err[512], where[PATH_MAX + 32];
    cli_info_value(t, "end_pc", pcs, sizeof pcs);
    uint64_t pc = strtoull(pcs, NULL, 16);
    const memtap_module *m = pc ? rewritten_at(t, pc) : NULL;
    if (!m)
        return 0;
    cache c;
    cache_rules rules;
    struct mt_rewrite_header h;
    if (!copies) {
        cache_rules_from_env(&rules);
        copies = cache_open(&c, NULL, &rules, err, sizeof err) == 0 ? &c : NULL;
    }
    if (rewrite_read_header(m->path, &h) == 0) /* memtap instrument's copy */
        snprintf(copy, sizeof copy, "%s", m->path);
    else if (!copies || cache_find(copies, m->path, copy, sizeof copy) != 0)
        return 0;
    if (rewrite_blame(m->path, copy, pc - m->base, sig, why,
                      sizeof why) != 1)
        return 0;
    where_in_modules(t, pc, where, sizeof where);
    fprintf(stderr, "memtap: error: %s: the process died of signal %d (%s) at "
                    "%s, %s.  This is memtap's fault, not the program's: run "
                    "it with --engine fault, and please report this message "
                    "with the file's package and version\n",
            path, sig, strsignal(sig), where, why);
    return 1;
}

/* What the bypass rules left out of the rewritten modules, by rule
 * (rewritten_bypassed: counts in analysis_counts.bypass order): said once
 * by the run that rewrote them (its first trace; a forked child's copies
 * are the parent's), not again by every command that reads a trace. */
static void note_bypassed(const char *path, const memtap_trace *t)
{
    static int said;
    if (said++)
        return;
    static const char *const rules[] = { "stack", "static", "read-only",
                                         "tested loads", "ignored" };
    char v[256], text[256] = "";
    cli_info_value(t, "rewritten_bypassed", v, sizeof v);
    const char *p = v;
    uint64_t total = 0;
    size_t used = 0;
    for (size_t k = 0; k < sizeof rules / sizeof *rules && *p; k++) {
        char *end;
        uint64_t n = strtoull(p, &end, 10);
        if (end == p)
            break;
        p = end;
        total += n;
        if (n && used < sizeof text) {
            int w = snprintf(text + used, sizeof text - used, "%s%s %" PRIu64,
                             used ? ", " : "", rules[k], n);
            used += w > 0 ? (size_t)w : 0;
        }
    }
    if (total)
        cli_note("%s: the bypass rules left %" PRIu64
                        " operands of the rewritten code uninstrumented (%s)\n",
                path, total, text);
}

int cli_report_health(const char *path, const memtap_trace *t, int dropped,
                      const cache *copies)
{
    int problems = 0;
    const memtap_trace_health *h = memtap_trace_get_health(t);
    if (h->truncated && ++problems)
        fprintf(stderr, "memtap: warning: %s: the file ends inside a chunk "
                        "(the process was killed?); all %" PRIu64
                        " complete chunks were read\n", path, h->chunks);
    if (h->corrupt_chunks && ++problems)
        fprintf(stderr, "memtap: warning: %s: %" PRIu64 " corrupt chunk(s) "
                        "skipped (%" PRIu64 " bytes)\n", path,
                h->corrupt_chunks, h->skipped_bytes);
    if (h->duplicates && ++problems)
        fprintf(stderr, "memtap: warning: %s: %" PRIu64 " events were in the "
                        "file twice (a chunk written twice?); the copies "
                        "were dropped\n", path, h->duplicates);
    char end[64], code[32];
    cli_info_value(t, "end", end, sizeof end);
    cli_info_value(t, "end_code", code, sizeof code);
    if (!end[0] && ++problems)
        fprintf(stderr, "memtap: warning: %s: no end record: the process "
                        "was killed, is still running, or its trace could "
                        "not be written to the end\n", path);
    else if (strcmp(end, "signal") == 0 && !blame(path, t, atoi(code), copies))
        cli_note("%s: the process ended by signal %s\n",
                path, code);
    uint64_t exposed = info_u64(t, "exposed_windows");
    if (exposed && ++problems) {
        char first[64];
        cli_info_value(t, "exposed_first", first, sizeof first);
        fprintf(stderr, "memtap: warning: %s: %" PRIu64 " access windows "
                        "were open while other threads ran: their accesses "
                        "to those pages may be missing (the first: %s)\n",
                path, exposed,
                strcmp(first, "stop") == 0 ? "the other threads could not "
                                             "be stopped"
                : first[0] ? first : "not recorded");
    }
    count_note(t, path, "signals_merged",
               "deliveries of asynchronous signals were merged into the "
               "next: their handlers' traced accesses took longer than the "
               "signals' period");
    count_note(t, path, "stack_pages",
               "pages of traced memory were thread stacks (a goroutine's, "
               "say) and were traced no more from then on: other data on "
               "those pages is not recorded");
    count_note(t, path, "code_pages",
               "pages of traced memory held code the program ran (a JIT "
               "compiler's) and were traced no more from then on: accesses "
               "to those pages are not recorded");
    uint64_t missed = info_u64(t, "watch_blocks_missed");
    if (missed && ++problems)
        fprintf(stderr, "memtap: warning: %s: %" PRIu64 " blocks of watched "
                        "allocation sites were not watched (more than 4096 "
                        "alive at once): their accesses are missing\n", path,
                missed);
    count_note(t, path, "ignored",
               "accesses inside the --ignore ranges were not recorded, as "
               "asked");
    uint64_t refused = info_u64(t, "rewritten_refused");
    if (refused && ++problems)
        fprintf(stderr, "memtap: warning: %s: %" PRIu64 " rewritten module(s) "
                        "could not be turned on (the run said which): their "
                        "accesses are missing\n", path, refused);
    uint64_t made = info_u64(t, "code_made");
    if (made && ++problems) {
        char first[PATH_MAX + 64];
        cli_info_value(t, "code_made_first", first, 32);
        where_in_modules(t, strtoull(first, NULL, 16), first, sizeof first);
        fprintf(stderr, "memtap: warning: %s: the program made %" PRIu64
                        " executable mapping(s) of its own (code generated "
                        "at run time, a JIT's; the first from %s): the static "
                        "engine does not trace that code, so its accesses "
                        "are missing (--engine fault traces them)\n",
                path, made, first);
    }
    count_note(t, path, "async_io_refused",
               "set-up(s) of io_uring or kernel AIO were answered ENOSYS (the "
               "kernel would copy the program's buffers outside any system "
               "call, unrecorded): the program ran its fallback");
    if (copies)
        note_bypassed(path, t);
    uint64_t traps = info_u64(t, "rewritten_traps_hit");
    if (traps && traps * 1000 > h->events) /* more than 0.1 % */
        cli_note("%s: %" PRIu64 " executions of "
                        "rewritten code went through int3 (no room for a "
                        "jump at those sites: microseconds each)\n", path,
                traps);
    uint64_t past = info_u64(t, "rewritten_past_leader");
    if (past && ++problems)
        fprintf(stderr, "memtap: warning: %s: %" PRIu64 " time(s) the program "
                        "entered rewritten code where no analysis saw a way "
                        "in, past an operand whose records an operand after it "
                        "rebuilds (elision): those records are missing there "
                        "(a copy made with `memtap instrument --no-elision` "
                        "records them)\n", path, past);
    uint64_t lost = info_u64(t, "dropped");
    if (lost && ++problems && dropped) {
        int err = (int)info_u64(t, "write_errno");
        fprintf(stderr, "memtap: warning: %s: %" PRIu64 " events lost%s%s\n",
                path, lost, err ? ": " : " while recording",
                err ? strerror(err) : "");
    }
    return problems;
}
