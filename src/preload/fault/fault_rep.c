/*
 * fault_rep.c - the fault engine's rep movs / rep stos: performed in the
 * handler with the pages they cover opened as memtap's own, and recorded
 * as one block event (or element by element, strings.c), so a copy of a
 * megabyte costs one trap rather than one per element.
 */
#define _GNU_SOURCE
#include "fault.h"
#include "fault_insn.h"
#include "preload/record/strings.h"
#include "memtap/trace.h"

#include <ucontext.h>

/* Whether an element at addr is the fault engine's to record. */
static int traced_byte(uint64_t addr)
{
    return traced_has((uintptr_t)addr, 1);
}

/* rep movs / rep stos: performed here, recorded as strings.c says (one
 * block event, or element by element). */
int fault_emulate_rep_string(ucontext_t *uc, const x86_access_insn *insn)
{
    unsigned size;
    int kind = x86_access_rep_string(insn, &size);
    if (!kind)
        return 0;
    int movs = kind == X86_OP_MOVS;
    greg_t *g = uc->uc_mcontext.gregs;
    uint64_t elem = size, n = (uint64_t)g[REG_RCX];
    int down = (g[REG_EFL] & 0x400) != 0;
    uint64_t dst = (uint64_t)g[REG_RDI], src = (uint64_t)g[REG_RSI];
    uint64_t bytes = n * elem;
    uint64_t dlo = down ? dst - bytes + elem : dst;
    uint64_t slo = down ? src - bytes + elem : src;
    traced_open_set d, s;
    traced_open(&d, dlo, bytes);
    if (movs)
        traced_open(&s, slo, bytes);
    uint64_t val = (uint64_t)g[REG_RAX];
    for (uint64_t k = 0; k < n; k++) {
        uint8_t *to = (uint8_t *)(uintptr_t)dst;
        const uint8_t *from = movs ? (const uint8_t *)(uintptr_t)src
                                   : (const uint8_t *)&val;
        uint8_t e[8]; /* an element is read whole, then written: an
                         overlap closer than its size copies as the
                         instruction does */
        for (uint64_t b = 0; b < elem; b++)
            e[b] = ((const volatile uint8_t *)from)[b];
        for (uint64_t b = 0; b < elem; b++)
            ((volatile uint8_t *)to)[b] = e[b];
        dst = down ? dst - elem : dst + elem;
        src = down ? src - elem : src + elem;
    }
    if (movs)
        traced_close(&s);
    traced_close(&d);
    string_op op = { movs ? MEMTAP_EV_COPY : MEMTAP_EV_BLOCK_STORE,
                     (uint8_t)elem, (uint8_t)down, (uint64_t)g[REG_RIP],
                     (uint64_t)g[REG_RDI], (uint64_t)g[REG_RSI], n };
    strings_record(&op, strings_per_element() ? traced_byte : NULL);
    g[REG_RDI] = (greg_t)dst;
    if (movs)
        g[REG_RSI] = (greg_t)src;
    g[REG_RCX] = 0;
    g[REG_RIP] += x86_access_length(insn);
    return 1;
}
