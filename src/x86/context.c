/*
 * context.c - general registers and operand addresses from a signal's
 * saved registers (see context.h).
 */
#define _GNU_SOURCE
#include "x86/context.h"
#include "x86/insn.h"

#include "sys/rawsys.h"

#include <asm/prctl.h>
#include <sys/syscall.h>

const int x86_greg_of[16] = {
    REG_RAX, REG_RCX, REG_RDX, REG_RBX, REG_RSP, REG_RBP, REG_RSI, REG_RDI,
    REG_R8,  REG_R9,  REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15,
};

uint64_t x86_context_gpr(const ucontext_t *uc, ZydisRegister r)
{
    int i = x86_gpr_index(r);
    if (i < 0 || i > 15)
        return 0;
    uint64_t v = (uint64_t)uc->uc_mcontext.gregs[x86_greg_of[i]];
    if (ZydisRegisterGetWidth(ZYDIS_MACHINE_MODE_LONG_64, r) == 32)
        v &= 0xffffffffu;
    return v;
}

static uint64_t segment_base(ZydisRegister seg)
{
    unsigned long base = 0;
    if (seg == ZYDIS_REGISTER_FS)
        raw_syscall3(SYS_arch_prctl, ARCH_GET_FS, &base, 0);
    else if (seg == ZYDIS_REGISTER_GS)
        raw_syscall3(SYS_arch_prctl, ARCH_GET_GS, &base, 0);
    return base;
}

uint64_t x86_effective_address(const ucontext_t *uc,
                               const ZydisDecodedInstruction *insn,
                               const ZydisDecodedOperand *op)
{
    uint64_t pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
    uint64_t a = (uint64_t)op->mem.disp.value;
    if (op->mem.base == ZYDIS_REGISTER_RIP)
        a += pc + insn->length;
    else
        a += x86_context_gpr(uc, op->mem.base);
    if (op->mem.index != ZYDIS_REGISTER_NONE &&
        op->mem.type != ZYDIS_MEMOP_TYPE_VSIB)
        a += x86_context_gpr(uc, op->mem.index) * op->mem.scale;
    if (insn->address_width == 32)
        a &= 0xffffffffu;
    return a + segment_base(op->mem.segment);
}
