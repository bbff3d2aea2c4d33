/*
 * x86/insn.h - one x86-64 instruction as the analyses, the rewriter and the
 * verifier need it, in memtap's own types (decoded by Zydis, whose types
 * stay inside src/x86/): its control flow (branch kind and direct target),
 * the general-purpose registers it writes, each memory operand (registers,
 * scale, displacement, size, read/write, explicit or implicit, what kind
 * of access it is) and its operands as listed, for the analyses' patterns.
 */
#ifndef MEMTAP_X86_INSN_H
#define MEMTAP_X86_INSN_H

#include <stddef.h>
#include <stdint.h>

/* A register as memtap names it: its class in the high byte, its number
 * in hardware order (rax rcx rdx rbx rsp rbp rsi rdi r8 .. r15) in the
 * low one; 0 is none.  Registers no analysis names one by one (vector,
 * control, ...) are X86_RC_OTHER, equal only to themselves. */
typedef uint16_t x86_reg;
enum {
    X86_RC_GPR64 = 0x100,  /* rax .. r15 */
    X86_RC_GPR32 = 0x200,  /* eax .. r15d */
    X86_RC_GPR16 = 0x300,  /* ax .. r15w */
    X86_RC_GPR8 = 0x400,   /* al cl dl bl spl bpl sil dil r8b .. r15b */
    X86_RC_GPR8H = 0x500,  /* ah ch dh bh */
    X86_RC_IP = 0x600,     /* rip, eip */
    X86_RC_SEGMENT = 0x700, /* es cs ss ds fs gs */
    X86_RC_OTHER = 0x800,
};
#define X86_REG_NONE ((x86_reg)0)
#define X86_REG_RAX ((x86_reg)(X86_RC_GPR64 | 0))
#define X86_REG_RCX ((x86_reg)(X86_RC_GPR64 | 1))
#define X86_REG_RDX ((x86_reg)(X86_RC_GPR64 | 2))
#define X86_REG_RSP ((x86_reg)(X86_RC_GPR64 | 4))
#define X86_REG_RBP ((x86_reg)(X86_RC_GPR64 | 5))
#define X86_REG_RIP ((x86_reg)(X86_RC_IP | 0))
#define X86_REG_EIP ((x86_reg)(X86_RC_IP | 1))
#define X86_REG_FS ((x86_reg)(X86_RC_SEGMENT | 4))
#define X86_REG_GS ((x86_reg)(X86_RC_SEGMENT | 5))

/* The operations the analyses and the rewriter look for by name; any
 * other instruction is X86_OP_OTHER (x86_insn.mnemonic tells them
 * apart). */
typedef enum x86_op {
    X86_OP_OTHER = 0,
    X86_OP_MOV, X86_OP_MOVSXD, X86_OP_CDQE, X86_OP_LEA,
    X86_OP_ADD, X86_OP_SUB, X86_OP_CMP,
    X86_OP_POP, X86_OP_LEAVE,
    X86_OP_JMP, X86_OP_RET,
    X86_OP_SYSRET,         /* sysret, sysexit (iret is a return) */
    X86_OP_JNBE, X86_OP_JNB,
    X86_OP_LOOP,           /* loop, loope, loopne, jrcxz, jecxz, jcxz: no rel32 form */
    X86_OP_NOP, X86_OP_INT3, X86_OP_UD2, X86_OP_HLT,
    /* string operations (not SSE's movsd and cmpsd) */
    X86_OP_MOVS, X86_OP_STOS, X86_OP_LODS, X86_OP_CMPS, X86_OP_SCAS,
} x86_op;

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
    x86_reg segment;        /* X86_REG_NONE unless fs/gs */
    x86_reg base;           /* X86_REG_NONE, a GPR, or rip */
    x86_reg index;
    uint8_t scale;          /* 0 when there is no index */
    int64_t disp;
    uint64_t target;        /* link-time address for RIP-relative operands */
    uint32_t size;          /* bytes accessed */
    uint8_t read, write;
    uint8_t kind;           /* x86_mem_kind */
    uint8_t implicit;       /* x86_implicit */
    uint8_t stack;          /* addressed from rsp */
} x86_mem;

/* One operand as the decoder lists it, for the analyses' patterns (a
 * jump table's bound, the load of its entry) and for liveness. */
typedef enum x86_operand_type {
    X86_OPND_NONE = 0, X86_OPND_REG, X86_OPND_MEM, X86_OPND_IMM, X86_OPND_PTR,
} x86_operand_type;
/* x86_operand.actions */
enum { X86_ACT_READ = 1, X86_ACT_WRITE = 2, X86_ACT_CONDREAD = 4, X86_ACT_CONDWRITE = 8 };
/* x86_operand.mem_type */
enum { X86_MEMOP_MEM = 0, X86_MEMOP_AGEN, X86_MEMOP_MIB, X86_MEMOP_VSIB };

typedef struct x86_operand {
    uint8_t type;            /* x86_operand_type */
    uint8_t actions;         /* X86_ACT_* */
    uint8_t mem_type;        /* X86_MEMOP_* (lea's is AGEN) */
    uint8_t scale;           /* memory: 0 when there is no index */
    uint8_t imm_relative;    /* immediate: relative to the next instruction */
    uint16_t size;           /* bits */
    x86_reg reg;             /* register */
    x86_reg segment, base, index; /* memory */
    int64_t value;           /* memory: displacement; immediate: its value */
    uint64_t target;         /* rip-relative memory, relative immediate:
                                the link-time address it names */
} x86_operand;

#define X86_MAX_OPERANDS 10
#define X86_MAX_LENGTH 15

typedef struct x86_insn {
    uint64_t addr;
    uint8_t length;
    uint8_t flow;            /* x86_flow */
    uint8_t nmem;
    uint8_t is_padding;      /* nop, int3: fills between functions */
    uint8_t avx512;          /* EVEX-encoded */
    uint8_t op;              /* x86_op */
    uint16_t mnemonic;       /* the same number for the same mnemonic */
    uint8_t addr32;          /* 32-bit addressing (an 0x67 prefix) */
    uint8_t rep;             /* X86_REP_* prefix */
    uint8_t nops;            /* operands listed: all (x86_decode), or
                                the visible ones (x86_decode_flow) */
    uint8_t nvisible;        /* the visible ones among them, first */
    uint8_t branch_at, branch_size; /* a relative branch's immediate:
                                       offset in the bytes, bits (0: none) */
    uint8_t disp_at, disp_size; /* the displacement: offset, bits (0: none) */
    uint64_t target;         /* direct branch/call target, else 0 */
    uint32_t writes;         /* bit per x86_gpr_index of registers written */
    x86_mem mem[X86_MAX_MEM];
    x86_operand ops[X86_MAX_OPERANDS];
    uint8_t bytes[X86_MAX_LENGTH]; /* the instruction's own (x86_format) */
} x86_insn;

/* x86_insn.rep */
enum { X86_REP_NONE = 0, X86_REP_E, X86_REP_NE };

/* A decoder, kept by its user (no allocation: the fault engine's handlers
 * decode too); its inside is insn.c's. */
typedef struct x86_decoder {
    _Alignas(8) unsigned char opaque[64];
} x86_decoder;

int x86_decoder_init(x86_decoder *d);

/* Decodes the instruction at buf (len bytes available) whose link-time
 * address is addr.  Returns 0, or -1 when the bytes are not a valid
 * instruction. */
int x86_decode(const x86_decoder *d, const uint8_t *buf, size_t len,
               uint64_t addr, x86_insn *out);

/* The part of x86_decode that finding code needs, at a fraction of its
 * cost: everything but mem[] and writes, and of the operands only the
 * visible ones (nops = nvisible). */
int x86_decode_flow(const x86_decoder *d, const uint8_t *buf, size_t len,
                    uint64_t addr, x86_insn *out);

/* The length of the instruction at buf (len bytes available), or 0 when
 * the bytes are not a valid instruction. */
unsigned x86_decode_length(const x86_decoder *d, const uint8_t *buf, size_t len);

/* Index 0..16 of the 64-bit register enclosing r (rax=0 ... r15=15,
 * 16 = rip), or -1 when r is not a general-purpose register. */
int x86_gpr_index(x86_reg r);
/* Bits of register r (8 .. 64); 0 for any but a general register or the
 * instruction pointer. */
unsigned x86_reg_width(x86_reg r);

/* The visible operand i of insn, or NULL. */
static inline const x86_operand *x86_visible(const x86_insn *insn, unsigned i)
{
    return i < insn->nvisible ? &insn->ops[i] : NULL;
}

/* The general-purpose registers insn reads (bit per x86_gpr_index, 0..15,
 * memory operands' base and index included) and those it overwrites
 * whole (a 32- or 64-bit unconditional write, or a zeroing idiom), for
 * liveness.  A partial write reads the rest of its register. */
void x86_gpr_use_kill(const x86_insn *insn, uint32_t *use, uint32_t *kill);

/* One instruction as a linear sweep over millions of them reads it
 * (x86_scan): what it is, its length and where its relative fields point. */
typedef struct x86_scanned {
    uint64_t target;         /* a relative branch's target (branch), else 0 */
    uint64_t rip;            /* the address a rip-relative operand names
                                (modrm 00 101, a 32-bit displacement, 64-bit
                                addressing), else 0 */
    uint16_t mnemonic;       /* as x86_insn's */
    uint8_t op;              /* x86_op */
    uint8_t flow;            /* x86_flow, JUMP and CALL whether direct or not */
    uint8_t length;
    uint8_t branch;          /* it has a relative immediate */
    uint8_t disp_at, disp_size; /* as x86_insn's */
    uint8_t memory;          /* X86_SCAN_MEMORY: a visible operand reads or
                                writes memory (lea's and nops' do not) */
} x86_scanned;

/* x86_scan's what */
enum {
    X86_SCAN_MINIMAL = 1,    /* Zydis's minimal mode: a fraction of the cost */
    X86_SCAN_MEMORY = 2,     /* decode the operands where memory may hide */
};

/* Reads the instruction at p (avail bytes), whose link-time address is
 * at: 0, or -1 when the bytes are not a valid instruction. */
int x86_scan(const x86_decoder *d, const uint8_t *p, size_t avail, uint64_t at,
             unsigned what, x86_scanned *out);

/* Formats insn in AT&T syntax into buf (decoding its bytes again: for
 * listings). */
void x86_format(const x86_insn *insn, char *buf, size_t cap);
/* The same with branch targets and rip-relative operands as offsets. */
void x86_format_relative(const x86_insn *insn, char *buf, size_t cap);

#endif
