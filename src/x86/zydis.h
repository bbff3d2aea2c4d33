/*
 * x86/zydis.h - inside src/x86/ only: memtap's x86 names (x86_reg, the
 * decoder kept by its user) against Zydis's.  No header outside this
 * folder includes Zydis.
 */
#ifndef MEMTAP_X86_ZYDIS_H
#define MEMTAP_X86_ZYDIS_H

#include "x86/insn.h"

#include <Zydis/Zydis.h>

/* What an x86_decoder holds. */
typedef struct x86_decoders {
    ZydisDecoder dec;
    ZydisDecoder lengths;    /* Zydis's minimal mode: x86_decode_length */
} x86_decoders;
_Static_assert(sizeof(x86_decoders) <= sizeof(x86_decoder), "x86_decoder's room");
_Static_assert(_Alignof(x86_decoders) <= _Alignof(x86_decoder), "x86_decoder's alignment");

static inline const x86_decoders *x86_decoders_of(const x86_decoder *d)
{
    return (const x86_decoders *)(const void *)d->opaque;
}

/* insn decoded again from its bytes, whole: 0 or -1. */
int x86_zydis_decode(const x86_insn *insn, ZydisDecodedInstruction *zi,
                     ZydisDecodedOperand zops[ZYDIS_MAX_OPERAND_COUNT]);

/* Stores that write only the bytes a vector mask selects, which Zydis
 * gives as plain writes (AVX-512's masked stores are conditional ones):
 * vmaskmov*, vpmaskmov* and maskmov* (whose (%rdi) is implicit). */
int x86_zydis_mask_store(ZydisMnemonic m);

x86_reg x86_reg_from_zydis(ZydisRegister r);
ZydisRegister x86_reg_to_zydis(x86_reg r);

#endif
