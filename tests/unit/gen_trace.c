/*
 * gen_trace.c - writes a trace of N load/store events (for the streaming
 * test and benchmarks): "gen_trace PATH N".
 */
#include "memtap/trace.h"
#include "trace/writer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: gen_trace PATH N\n");
        return 2;
    }
    uint64_t n = strtoull(argv[2], NULL, 10);
    trace_writer *w;
    if (trace_writer_create(argv[1], 1, &w) != MEMTAP_OK)
        return 1;
    trace_writer_info(w, "end=exit\n");
    for (uint64_t i = 0; i < n; i++) {
        memtap_record r;
        memset(&r, 0, sizeof r);
        r.seq = i;
        r.kind = i % 3 ? 'L' : 'S';
        r.pc = 0x401000 + (i % 97) * 4;
        r.addr = 0x7f0000000000ull + (i * 8) % (1u << 24);
        r.size = 8;
        r.count = 1;
        if (trace_writer_event(w, (uint32_t)(1 + i / 100000 % 4), &r))
            return 1;
    }
    return trace_writer_close(w) == MEMTAP_OK ? 0 : 1;
}
