/*
 * x86/context.h - the general registers a signal saved, by memtap's
 * register names (no allocation, raw system calls only: for handlers).
 */
#ifndef MEMTAP_X86_CONTEXT_H
#define MEMTAP_X86_CONTEXT_H

#include <stdint.h>
#include <ucontext.h>

#include "x86/insn.h"

/* gregs index (REG_RAX, ...) of each general register in hardware order
 * (rax rcx rdx rbx rsp rbp rsi rdi r8 .. r15). */
extern const int x86_greg_of[16];

/* The value of general register r (of any width: a 32-bit one zero
 * extended, as an address uses it); 0 when r is none or not general. */
uint64_t x86_context_gpr(const ucontext_t *uc, x86_reg r);

#endif
