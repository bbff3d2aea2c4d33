/*
 * x86/access.h - the instruction at a signal's pc as the fault engine needs
 * it: decoded in a handler (no allocation, no lock, raw system calls
 * only), its memory operands with the addresses they reach from the saved
 * registers, and what running it out of line needs (which operand, which
 * register may stand in for it, its encoding with that register).
 */
#ifndef MEMTAP_X86_ACCESS_H
#define MEMTAP_X86_ACCESS_H

#include <stddef.h>
#include <stdint.h>
#include <ucontext.h>

#include "x86/insn.h"

/* A decoded instruction, kept by its user (a handler's stack, a hot
 * site's table); its inside is access.c's. */
typedef struct x86_access_insn {
    _Alignas(8) unsigned char opaque[1152];
} x86_access_insn;

/* Decodes the instruction at p (avail bytes readable): 0, or -1 when the
 * bytes are not a valid instruction. */
int x86_access_decode(const x86_decoder *d, const uint8_t *p, size_t avail,
                      x86_access_insn *out);

unsigned x86_access_length(const x86_access_insn *x);
/* Operands listed, hidden ones included (x86_access_operand's i). */
unsigned x86_access_operands(const x86_access_insn *x);
int x86_access_is_call(const x86_access_insn *x);
/* Any repeat prefix (rep, repe, repne). */
int x86_access_repeats(const x86_access_insn *x);

/* One memory operand's access. */
typedef struct x86_access {
    uint64_t addr;      /* where it reaches at uc */
    uint64_t size;      /* bytes (0 for operands of no size) */
    uint8_t read, write;
    uint8_t overwrites; /* an unconditional store, nothing read first */
    uint8_t through_rsp; /* addressed from rsp */
} x86_access;

/* Operand i of x as an access at uc (x at uc's pc): 1 with *a, or 0 when
 * it is no memory access (a register, lea's address).  A gather's or
 * scatter's is the element at `fault`. */
int x86_access_operand(const x86_access_insn *x, const ucontext_t *uc,
                       unsigned i, uint64_t fault, x86_access *a);

/* rep movs (X86_OP_MOVS) or rep stos (X86_OP_STOS) with 64-bit
 * addressing, *elem its element's bytes; 0 for anything else. */
int x86_access_rep_string(const x86_access_insn *x, unsigned *elem);

/* jmp *m or call *m near through an 8-byte memory operand (operand 0). */
int x86_access_indirect_branch(const x86_access_insn *x);

/* The one memory operand of x an out-of-line run completes (at most
 * max_bytes, explicit), or -1 when x is not one it runs: more than one
 * memory operand, control flow, repeat prefixes, registers it cannot
 * load and save (rsp's run is its own, segment and control registers),
 * instructions that may raise an exception of their own (div) or leave
 * the operand (bt with a register offset). */
int x86_access_completable(const x86_access_insn *x, unsigned max_bytes);

/* Whether x is of the base instruction set and names only general,
 * flags, instruction-pointer and segment registers (it runs without the
 * program's vector state loaded). */
int x86_access_integer_only(const x86_access_insn *x);

/* Encodes x at `to` (room for X86_MAX_LENGTH bytes) with its memory
 * operand `mem` as (S), S a general register x does not name: S's number
 * (hardware order) and *len the bytes written, or -1 when none encodes. */
int x86_access_encode_through(const x86_access_insn *x, int mem, uint8_t *to,
                              size_t *len);

#endif
