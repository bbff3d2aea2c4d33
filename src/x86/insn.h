/*
 * insn.h - Zydis glue for the static engine: one x86-64 instruction as the
 * analyses need it.  Decodes an instruction and summarizes its control flow
 * (branch kind and direct target), the general-purpose registers it writes
 * (explicitly or implicitly), and each memory operand (registers, scale,
 * displacement, size, read/write, explicit or implicit, and what kind of
 * access it is).
 */
#ifndef MEMTAP_X86_INSN_H
#define MEMTAP_X86_INSN_H

#include <stddef.h>
#include <stdint.h>

#include <Zydis/Zydis.h>

/* How an instruction leaves its basic block. */
typedef enum x86_flow {
    X86_FLOW_NEXT = 0,   /* falls through */
    X86_FLOW_JUMP,       /* unconditional direct jump */
    X86_FLOW_JCC,        /* conditional direct jump (also loop, jrcxz) */
    X86_FLOW_IJUMP,      /* indirect jump */
    X86_FLOW_CALL,       /* direct call */
    X86_FLOW_ICALL,      /* indirect call */
    X86_FLOW_RET,        /* return, iret */
    X86_FLOW_STOP,       /* hlt, ud2, int3: execution does not continue */
    X86_FLOW_SYSCALL,    /* syscall, int N: falls through, clobbers registers */
} x86_flow;

/* What a memory operand is. */
typedef enum x86_mem_kind {
    X86_MEM_ACCESS = 0,  /* an ordinary load and/or store */
    X86_MEM_VSIB,        /* gather/scatter: vector index, many addresses */
    X86_MEM_HINT,        /* prefetch, clflush, ...: no data access */
    X86_MEM_OTHER,       /* MIB (bndldx/bndstx) and other oddities */
} x86_mem_kind;

/* Where an implicit memory operand comes from. */
typedef enum x86_implicit {
    X86_IMPL_NONE = 0,   /* explicit operand */
    X86_IMPL_STACK,      /* push, pop, call, ret, enter, leave */
    X86_IMPL_STRING,     /* movs, stos, lods, cmps, scas, ins, outs */
    X86_IMPL_OTHER,      /* xlat, xsave areas, ... */
} x86_implicit;

#define X86_MAX_MEM 4

/* A memory operand as it is addressed before its instruction runs (a
 * push's slot is -size(%rsp)). */
typedef struct x86_mem {
    ZydisRegister segment;  /* ZYDIS_REGISTER_NONE unless fs/gs */
    ZydisRegister base;     /* ZYDIS_REGISTER_NONE, a GPR, or RIP */
    ZydisRegister index;
    uint8_t scale;          /* 0 when there is no index */
    int64_t disp;
    uint64_t target;        /* link-time address for RIP-relative operands */
    uint32_t size;          /* bytes accessed */
    uint8_t read, write;
    uint8_t kind;           /* x86_mem_kind */
    uint8_t implicit;       /* x86_implicit */
    uint8_t stack;          /* addressed from rsp */
} x86_mem;

typedef struct x86_insn {
    uint64_t addr;
    uint8_t length;
    uint8_t flow;            /* x86_flow */
    uint8_t nmem;
    uint8_t is_padding;      /* nop, int3: fills between functions */
    uint8_t avx512;          /* EVEX-encoded */
    uint16_t mnemonic;       /* ZydisMnemonic */
    uint64_t target;         /* direct branch/call target, else 0 */
    uint32_t writes;         /* bit per x86_gpr_index of registers written */
    x86_mem mem[X86_MAX_MEM];
    /* Raw decoded instruction for callers that need more (patterns). */
    ZydisDecodedInstruction zi;
    ZydisDecodedOperand zops[ZYDIS_MAX_OPERAND_COUNT];
} x86_insn;

typedef struct x86_decoder {
    ZydisDecoder dec;
    ZydisDecoder lengths;    /* Zydis's minimal mode: x86_decode_length */
} x86_decoder;

int x86_decoder_init(x86_decoder *d);

/* Decodes the instruction at buf (len bytes available) into Zydis's own
 * form only, for the fault engine's emulation: 0, or -1 when the bytes
 * are not a valid instruction.  No allocation, no lock: for handlers. */
int x86_decode_raw(const x86_decoder *d, const uint8_t *buf, size_t len,
                   ZydisDecodedInstruction *zi, ZydisDecodedOperand *zops);

/* Decodes the instruction at buf (len bytes available) whose link-time
 * address is addr.  Returns 0, or -1 when the bytes are not a valid
 * instruction. */
int x86_decode(const x86_decoder *d, const uint8_t *buf, size_t len,
               uint64_t addr, x86_insn *out);

/* The part of x86_decode that finding code needs, at a fraction of its
 * cost: length, mnemonic, flow, target and is_padding, and in zi and
 * zops the instruction and its visible operands (zi.operand_count_visible
 * of them; none of the hidden ones, no mem[] and no writes). */
int x86_decode_flow(const x86_decoder *d, const uint8_t *buf, size_t len,
                    uint64_t addr, x86_insn *out);

/* The length of the instruction at buf (len bytes available), or 0 when
 * the bytes are not a valid instruction. */
unsigned x86_decode_length(const x86_decoder *d, const uint8_t *buf, size_t len);

/* Index 0..16 of the 64-bit register enclosing r (rax=0 ... r15=15,
 * 16 = rip), or -1 when r is not a general-purpose register. */
int x86_gpr_index(ZydisRegister r);

/* The general-purpose registers insn reads (bit per x86_gpr_index, 0..15,
 * memory operands' base and index included) and those it overwrites
 * whole (a 32- or 64-bit unconditional write, or a zeroing idiom), for
 * liveness.  A partial write reads the rest of its register. */
void x86_gpr_use_kill(const x86_insn *insn, uint32_t *use, uint32_t *kill);

/* Formats insn in AT&T syntax into buf. */
void x86_format(const x86_insn *insn, char *buf, size_t cap);

#endif
