/*
 * strings.c - string operations (movs, stos, lods) as the fault engine
 * and rewritten code record them: one block event by default (Y for movs,
 * W for stos, G for lods: MadT's single event per block operation), or,
 * with MEMTAP_STRING_ELEMENTS=1 (memtap run --string-elements), each
 * element's load and store in the order the instruction makes them, as
 * Valgrind Lackey records them.  cmps and scas, which stop where the data
 * says, are recorded element by element either way (by their engines).
 */
#include "strings.h"
#include "preload/core/config.h"

#include "memtap/trace.h"
#include "sys/env.h"
#include "tracer.h"

#include <stdlib.h>
#include <string.h>

static int per_element;

void strings_init(void)
{
    per_element = config()->string_elements;
}

int strings_per_element(void) { return per_element; }

static int keeps(int (*kept)(uint64_t), uint64_t addr)
{
    return !kept || kept(addr);
}

void strings_record(const string_op *op, int (*kept)(uint64_t addr))
{
    int loads = op->kind != MEMTAP_EV_BLOCK_STORE;
    int stores = op->kind != MEMTAP_EV_BLOCK_FETCH;
    if (op->n == 0 || op->size == 0 || op->n > (UINT64_MAX >> 4) / op->size)
        return;
    if (per_element) {
        int64_t step = op->down ? -(int64_t)op->size : op->size;
        uint64_t dst = op->dst, src = op->src;
        for (uint64_t i = 0; i < op->n; i++, dst += step, src += step) {
            if (loads && keeps(kept, src))
                tracer_record(MEMTAP_EV_LOAD, 0, op->pc, src, op->size, 0, 0);
            if (stores && keeps(kept, dst))
                tracer_record(MEMTAP_EV_STORE, 0, op->pc, dst, op->size, 0, 0);
        }
        return;
    }
    uint64_t len = op->n * op->size, back = op->down ? len - op->size : 0;
    uint64_t dst = op->dst - back, src = op->src - back;
    if ((stores && keeps(kept, dst)) || (loads && keeps(kept, src)))
        tracer_record(op->kind, 0, op->pc, stores ? dst : src, len,
                    op->kind == MEMTAP_EV_COPY ? src : 0, 0);
}
