/*
 * context.c - general registers from a signal's saved registers (see
 * context.h).
 */
#define _GNU_SOURCE
#include "x86/context.h"

const int x86_greg_of[16] = {
    REG_RAX, REG_RCX, REG_RDX, REG_RBX, REG_RSP, REG_RBP, REG_RSI, REG_RDI,
    REG_R8,  REG_R9,  REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15,
};

uint64_t x86_context_gpr(const ucontext_t *uc, x86_reg r)
{
    int i = x86_gpr_index(r);
    if (i < 0 || i > 15)
        return 0;
    uint64_t v = (uint64_t)uc->uc_mcontext.gregs[x86_greg_of[i]];
    if (x86_reg_width(r) == 32)
        v &= 0xffffffffu;
    return v;
}
