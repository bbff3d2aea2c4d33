/*
 * x86/context.h - an instruction against the registers a signal saved: the
 * value of a general register named by Zydis and the address a memory
 * operand reaches, from a ucontext_t.  For the fault engine's handlers
 * (no allocation, raw system calls only).
 */
#ifndef MEMTAP_X86_CONTEXT_H
#define MEMTAP_X86_CONTEXT_H

#include <stdint.h>
#include <ucontext.h>

#include <Zydis/Zydis.h>

/* gregs index (REG_RAX, ...) of each general register in hardware order
 * (rax rcx rdx rbx rsp rbp rsi rdi r8 .. r15). */
extern const int x86_greg_of[16];

/* The value of general register r (of any width: a 32-bit one zero
 * extended, as an address uses it); 0 when r is none or not general. */
uint64_t x86_context_gpr(const ucontext_t *uc, ZydisRegister r);

/* The address memory operand op of insn (at uc's pc) reaches: base,
 * index times scale, displacement, rip-relative, 32-bit addressing and
 * an fs/gs segment base. */
uint64_t x86_effective_address(const ucontext_t *uc,
                               const ZydisDecodedInstruction *insn,
                               const ZydisDecodedOperand *op);

#endif
