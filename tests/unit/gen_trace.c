/*
 * gen_trace.c - writes traces for the tests and benchmarks, ordinary and
 * hostile:
 *   gen_trace PATH N                N load/store events of 4 threads
 *   gen_trace PATH threads N        N threads of one event each
 *   gen_trace PATH modules N FILE   N module entries naming FILE, an event
 *                                   in each
 *   gen_trace PATH paths FILE       a module and the parent trace named FILE
 *   gen_trace PATH bomb N           N threads, each one chunk declaring
 *                                   64 MiB of (zero) records
 *   gen_trace PATH infobomb N       N info chunks of 64 MiB of text each
 */
#include "memtap/trace.h"
#include "trace/writer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static memtap_record access_at(uint64_t seq, uint64_t pc, uint64_t addr)
{
    memtap_record r;
    memset(&r, 0, sizeof r);
    r.seq = seq;
    r.kind = seq % 3 ? 'L' : 'S';
    r.pc = pc;
    r.addr = addr;
    r.size = 8;
    r.count = 1;
    return r;
}

static int ordinary(trace_writer *w, uint64_t n)
{
    trace_writer_info(w, "end=exit\n");
    for (uint64_t i = 0; i < n; i++) {
        memtap_record r = access_at(i, 0x401000 + (i % 97) * 4,
                                    0x7f0000000000ull + (i * 8) % (1u << 24));
        if (trace_writer_event(w, (uint32_t)(1 + i / 100000 % 4), &r))
            return 1;
    }
    return 0;
}

static int threads(trace_writer *w, uint64_t n)
{
    trace_writer_info(w, "end=exit\n");
    for (uint64_t i = 0; i < n; i++) {
        memtap_record r = access_at(i, 0x401000, 0x7f0000000000ull + i * 8);
        if (trace_writer_event(w, (uint32_t)(1000 + i), &r))
            return 1;
    }
    return 0;
}

/* Module i of FILE is loaded at i GiB; its one event runs at its start. */
static int modules(trace_writer *w, uint64_t n, const char *file,
                   const char *parent)
{
    char info[4200];
    snprintf(info, sizeof info, "end=exit\n%s%s%s", parent ? "parent_trace=" : "",
             parent ? parent : "", parent ? "\nfork_seq=5\n" : "");
    trace_writer_info(w, info);
    memtap_segment seg = { 0, 1u << 20, 5, 0 };
    for (uint64_t i = 0; i < n; i++) {
        memtap_module m;
        memset(&m, 0, sizeof m);
        m.id = (uint32_t)i;
        m.base = (i + 1) << 30;
        m.path = file;
        m.segs = &seg;
        m.nsegs = 1;
        if (trace_writer_module(w, &m))
            return 1;
    }
    for (uint64_t i = 0; i < n; i++) {
        memtap_record r = access_at(i, ((i + 1) << 30) + 0x100,
                                    0x7f0000000000ull);
        if (trace_writer_event(w, 1, &r))
            return 1;
    }
    return 0;
}

static int bomb(trace_writer *w, uint64_t n)
{
    size_t count = (64u << 20) / sizeof(memtap_record);
    memtap_record *zero = calloc(count, sizeof *zero);
    if (!zero)
        return 1;
    trace_writer_info(w, "end=exit\n");
    int rc = 0;
    for (uint64_t i = 0; i < n && !rc; i++)
        rc = trace_writer_chunk(w, (uint32_t)(1 + i), zero, count) != 0;
    free(zero);
    return rc;
}

static int info_bomb(trace_writer *w, uint64_t n)
{
    size_t len = (64u << 20) - 1;
    char *text = malloc(len + 1);
    if (!text)
        return 1;
    memset(text, 'x', len);
    text[len] = '\0';
    trace_writer_info(w, "end=exit\n");
    for (uint64_t i = 0; i < n; i++)
        trace_writer_info(w, text);
    free(text);
    memtap_record r = access_at(0, 0x401000, 0x7f0000000000ull);
    return trace_writer_event(w, 1, &r) != 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: gen_trace PATH N | PATH threads N | "
                        "PATH modules N FILE | PATH paths FILE | "
                        "PATH bomb N | PATH infobomb N\n");
        return 2;
    }
    trace_writer *w;
    if (trace_writer_create(argv[1], 1, &w) != MEMTAP_OK)
        return 1;
    const char *mode = argv[2];
    uint64_t n = argc > 3 ? strtoull(argv[3], NULL, 10) : 0;
    int rc;
    if (strcmp(mode, "threads") == 0)
        rc = threads(w, n);
    else if (strcmp(mode, "modules") == 0 && argc > 4)
        rc = modules(w, n, argv[4], NULL);
    else if (strcmp(mode, "paths") == 0)
        rc = modules(w, 1, argv[3], argv[3]);
    else if (strcmp(mode, "bomb") == 0)
        rc = bomb(w, n);
    else if (strcmp(mode, "infobomb") == 0)
        rc = info_bomb(w, n);
    else
        rc = ordinary(w, strtoull(mode, NULL, 10));
    return trace_writer_close(w) == MEMTAP_OK && !rc ? 0 : 1;
}
