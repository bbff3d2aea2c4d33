/*
 * trace/accesses.h - which data accesses a record stands for, written
 * once for every offline tool: a load or a store is its one access, a
 * copy reads its source (addr2) and then writes its destination (addr),
 * a block fetch or store is one access over its span; heap, module,
 * thread and the other events stand for none.  And the pieces an access
 * makes in a cache of line-sized blocks.
 */
#ifndef MEMTAP_TRACE_ACCESSES_H
#define MEMTAP_TRACE_ACCESSES_H

#include <stdint.h>

#include "memtap/trace.h"

typedef struct trace_access {
    uint64_t addr, size;
    int write;
} trace_access;

/* The accesses r stands for, in the order they happen, into out; returns
 * how many (0, 1 or 2). */
static inline int trace_record_accesses(const memtap_record *r, trace_access out[2])
{
    switch (r->kind) {
    case MEMTAP_EV_LOAD:
    case MEMTAP_EV_BLOCK_FETCH:
        out[0] = (trace_access){ r->addr, r->size, 0 };
        return 1;
    case MEMTAP_EV_STORE:
    case MEMTAP_EV_BLOCK_STORE:
        out[0] = (trace_access){ r->addr, r->size, 1 };
        return 1;
    case MEMTAP_EV_COPY:
        out[0] = (trace_access){ memtap_copy_source(r), r->size, 0 };
        out[1] = (trace_access){ r->addr, r->size, 1 };
        return 2;
    default:
        return 0;
    }
}

/* The first piece of [addr, addr+size) that stays inside one line of
 * `line` bytes (a power of two): its size. */
static inline uint64_t trace_line_piece(uint64_t addr, uint64_t size, uint64_t line)
{
    uint64_t room = line - (addr & (line - 1));
    return size < room ? size : room;
}

#endif
