/*
 * access.c - the fault engine's view of an instruction (see access.h):
 * Zydis's decoding kept whole inside x86_access_insn, the addresses its
 * operands reach from a signal's saved registers, and the re-encoding an
 * out-of-line run needs.
 */
#define _GNU_SOURCE
#include "x86/access.h"
#include "x86/context.h"
#include "x86/zydis.h"

#include "sys/rawsys.h"

#include <asm/prctl.h>
#include <string.h>
#include <sys/syscall.h>

typedef struct decoded {
    ZydisDecodedInstruction zi;
    ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
} decoded;
_Static_assert(sizeof(decoded) <= sizeof(x86_access_insn), "x86_access_insn's room");
_Static_assert(_Alignof(decoded) <= _Alignof(x86_access_insn), "its alignment");

static const decoded *in(const x86_access_insn *x)
{
    return (const decoded *)(const void *)x->opaque;
}

int x86_access_decode(const x86_decoder *d, const uint8_t *p, size_t avail,
                      x86_access_insn *out)
{
    decoded *o = (decoded *)(void *)out->opaque;
    return ZYAN_SUCCESS(ZydisDecoderDecodeFull(&x86_decoders_of(d)->dec, p, avail,
                                               &o->zi, o->ops))
               ? 0 : -1;
}

unsigned x86_access_length(const x86_access_insn *x) { return in(x)->zi.length; }
unsigned x86_access_operands(const x86_access_insn *x) { return in(x)->zi.operand_count; }
int x86_access_is_call(const x86_access_insn *x)
{
    return in(x)->zi.mnemonic == ZYDIS_MNEMONIC_CALL;
}

int x86_access_repeats(const x86_access_insn *x)
{
    return (in(x)->zi.attributes & (ZYDIS_ATTRIB_HAS_REP | ZYDIS_ATTRIB_HAS_REPE |
                                    ZYDIS_ATTRIB_HAS_REPNE)) != 0;
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

static uint64_t gpr_at(const ucontext_t *uc, ZydisRegister r)
{
    return x86_context_gpr(uc, x86_reg_from_zydis(r));
}

/* The address memory operand op of zi (at uc's pc) reaches: base, index
 * times scale, displacement, rip-relative, 32-bit addressing and an fs/gs
 * segment base. */
static uint64_t effective_address(const ucontext_t *uc,
                                  const ZydisDecodedInstruction *zi,
                                  const ZydisDecodedOperand *op)
{
    uint64_t pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
    uint64_t a = (uint64_t)op->mem.disp.value;
    if (op->mem.base == ZYDIS_REGISTER_RIP)
        a += pc + zi->length;
    else
        a += gpr_at(uc, op->mem.base);
    if (op->mem.index != ZYDIS_REGISTER_NONE &&
        op->mem.type != ZYDIS_MEMOP_TYPE_VSIB)
        a += gpr_at(uc, op->mem.index) * op->mem.scale;
    if (zi->address_width == 32)
        a &= 0xffffffffu;
    return a + segment_base(op->mem.segment);
}

int x86_access_operand(const x86_access_insn *x, const ucontext_t *uc,
                       unsigned i, uint64_t fault, x86_access *a)
{
    const decoded *d = in(x);
    const ZydisDecodedOperand *op = &d->ops[i];
    if (i >= d->zi.operand_count || op->type != ZYDIS_OPERAND_TYPE_MEMORY ||
        (op->mem.type != ZYDIS_MEMOP_TYPE_MEM && op->mem.type != ZYDIS_MEMOP_TYPE_VSIB))
        return 0;
    if (op->mem.type == ZYDIS_MEMOP_TYPE_VSIB) {
        a->addr = fault;
        a->size = op->element_size / 8;
    } else {
        a->addr = effective_address(uc, &d->zi, op);
        a->size = op->size / 8;
    }
    a->read = (op->actions & ZYDIS_OPERAND_ACTION_MASK_READ) != 0;
    a->write = (op->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE) != 0;
    a->overwrites = (op->actions & ~ZYDIS_OPERAND_ACTION_WRITE) == 0 &&
                    !x86_zydis_mask_store(d->zi.mnemonic);
    a->through_rsp = op->mem.base == ZYDIS_REGISTER_RSP;
    return 1;
}

int x86_access_rep_string(const x86_access_insn *x, unsigned *elem)
{
    const decoded *d = in(x);
    int op = 0;
    switch (d->zi.mnemonic) {
    case ZYDIS_MNEMONIC_MOVSB: case ZYDIS_MNEMONIC_MOVSW:
    case ZYDIS_MNEMONIC_MOVSD: case ZYDIS_MNEMONIC_MOVSQ:
        op = X86_OP_MOVS;
        break;
    case ZYDIS_MNEMONIC_STOSB: case ZYDIS_MNEMONIC_STOSW:
    case ZYDIS_MNEMONIC_STOSD: case ZYDIS_MNEMONIC_STOSQ:
        op = X86_OP_STOS;
        break;
    default:
        return 0;
    }
    if (!(d->zi.attributes & ZYDIS_ATTRIB_HAS_REP) || d->zi.address_width != 64 ||
        d->ops[0].type != ZYDIS_OPERAND_TYPE_MEMORY)
        return 0;
    *elem = d->ops[0].size / 8;
    return op;
}

int x86_access_indirect_branch(const x86_access_insn *x)
{
    const decoded *d = in(x);
    return (d->zi.mnemonic == ZYDIS_MNEMONIC_JMP || d->zi.mnemonic == ZYDIS_MNEMONIC_CALL) &&
           d->zi.meta.branch_type == ZYDIS_BRANCH_TYPE_NEAR &&
           d->ops[0].type == ZYDIS_OPERAND_TYPE_MEMORY &&
           d->ops[0].mem.type == ZYDIS_MEMOP_TYPE_MEM && d->ops[0].size == 64;
}

/* Registers the out-of-line run loads and saves faithfully. */
static int usable_register(ZydisRegister r)
{
    switch (ZydisRegisterGetClass(r)) {
    case ZYDIS_REGCLASS_GPR8:
    case ZYDIS_REGCLASS_GPR16:
    case ZYDIS_REGCLASS_GPR32:
    case ZYDIS_REGCLASS_GPR64:
        return x86_gpr_index(x86_reg_from_zydis(r)) != 4; /* rsp: the run has its own stack */
    case ZYDIS_REGCLASS_X87:
    case ZYDIS_REGCLASS_MMX:
    case ZYDIS_REGCLASS_XMM:
    case ZYDIS_REGCLASS_YMM:
    case ZYDIS_REGCLASS_ZMM:
    case ZYDIS_REGCLASS_MASK: /* AVX-512's state is loaded and saved too */
    case ZYDIS_REGCLASS_FLAGS:
        return 1;
    default:
        return r == ZYDIS_REGISTER_MXCSR || r == ZYDIS_REGISTER_X87CONTROL ||
               r == ZYDIS_REGISTER_X87STATUS || r == ZYDIS_REGISTER_X87TAG;
    }
}

static int refused_mnemonic(const decoded *d)
{
    switch (d->zi.mnemonic) {
    case ZYDIS_MNEMONIC_DIV:
    case ZYDIS_MNEMONIC_IDIV:       /* may raise #DE in the handler */
    case ZYDIS_MNEMONIC_MOVDIR64B:
    case ZYDIS_MNEMONIC_ENQCMD:
    case ZYDIS_MNEMONIC_ENQCMDS:    /* a second, register-addressed store */
        return 1;
    case ZYDIS_MNEMONIC_BT:
    case ZYDIS_MNEMONIC_BTS:
    case ZYDIS_MNEMONIC_BTR:
    case ZYDIS_MNEMONIC_BTC:        /* a register bit offset leaves the operand */
        return d->ops[1].type == ZYDIS_OPERAND_TYPE_REGISTER;
    default:
        return 0;
    }
}

int x86_access_completable(const x86_access_insn *x, unsigned max_bytes)
{
    const decoded *d = in(x);
    const ZydisDecodedInstruction *zi = &d->zi;
    if (zi->meta.branch_type != ZYDIS_BRANCH_TYPE_NONE ||
        zi->encoding == ZYDIS_INSTRUCTION_ENCODING_MVEX ||
        (zi->attributes & (ZYDIS_ATTRIB_HAS_REP | ZYDIS_ATTRIB_HAS_REPE |
                           ZYDIS_ATTRIB_HAS_REPNE)) ||
        refused_mnemonic(d))
        return -1;
    int mem = -1;
    for (int i = 0; i < zi->operand_count; i++) {
        const ZydisDecodedOperand *op = &d->ops[i];
        switch (op->type) {
        case ZYDIS_OPERAND_TYPE_MEMORY:
            if (op->mem.type == ZYDIS_MEMOP_TYPE_AGEN)
                break;
            if (op->mem.type != ZYDIS_MEMOP_TYPE_MEM || mem >= 0 ||
                i >= zi->operand_count_visible || op->size == 0 ||
                op->size / 8 > max_bytes)
                return -1;
            mem = i;
            break;
        case ZYDIS_OPERAND_TYPE_REGISTER:
            if (!usable_register(op->reg.value))
                return -1;
            break;
        case ZYDIS_OPERAND_TYPE_IMMEDIATE:
            break;
        default:
            return -1;
        }
    }
    return mem;
}

int x86_access_integer_only(const x86_access_insn *x)
{
    const decoded *d = in(x);
    if (d->zi.meta.isa_ext != ZYDIS_ISA_EXT_BASE &&
        d->zi.meta.isa_ext != ZYDIS_ISA_EXT_LONGMODE)
        return 0;
    for (uint8_t i = 0; i < d->zi.operand_count; i++) {
        const ZydisDecodedOperand *op = &d->ops[i];
        ZydisRegister regs[3] = { ZYDIS_REGISTER_NONE, ZYDIS_REGISTER_NONE,
                                  ZYDIS_REGISTER_NONE };
        if (op->type == ZYDIS_OPERAND_TYPE_REGISTER)
            regs[0] = op->reg.value;
        else if (op->type == ZYDIS_OPERAND_TYPE_MEMORY) {
            regs[1] = op->mem.base;
            regs[2] = op->mem.index;
        }
        for (int r = 0; r < 3; r++) {
            if (regs[r] == ZYDIS_REGISTER_NONE)
                continue;
            switch (ZydisRegisterGetClass(regs[r])) {
            case ZYDIS_REGCLASS_GPR8: case ZYDIS_REGCLASS_GPR16:
            case ZYDIS_REGCLASS_GPR32: case ZYDIS_REGCLASS_GPR64:
            case ZYDIS_REGCLASS_FLAGS: case ZYDIS_REGCLASS_IP:
            case ZYDIS_REGCLASS_SEGMENT:
                break;
            default:
                return 0;
            }
        }
    }
    return 1;
}

/* The general registers x names as register operands (its memory
 * operand's base and index are not among them: they are replaced). */
static unsigned named_gprs(const decoded *d)
{
    unsigned named = 1u << 4; /* rsp */
    for (int i = 0; i < d->zi.operand_count; i++) {
        int g = d->ops[i].type == ZYDIS_OPERAND_TYPE_REGISTER
                    ? x86_gpr_index(x86_reg_from_zydis(d->ops[i].reg.value)) : -1;
        if (g >= 0)
            named |= 1u << g;
    }
    return named;
}

int x86_access_encode_through(const x86_access_insn *x, int mem, uint8_t *to,
                              size_t *len)
{
    static const int order[] = { 11, 10, 9, 8, 7, 6, 3, 5, 2, 1, 0 };
    const decoded *d = in(x);
    ZydisEncoderRequest r;
    if (!ZYAN_SUCCESS(ZydisEncoderDecodedInstructionToEncoderRequest(
            &d->zi, d->ops, d->zi.operand_count_visible, &r)))
        return -1;
    r.prefixes &= ~(ZydisInstructionAttributes)ZYDIS_ATTRIB_HAS_SEGMENT;
    r.address_size_hint = ZYDIS_ADDRESS_SIZE_HINT_NONE;
    ZydisEncoderOperand *m = &r.operands[mem];
    m->mem.index = ZYDIS_REGISTER_NONE;
    m->mem.scale = 0;
    m->mem.displacement = 0;
    unsigned named = named_gprs(d);
    for (size_t i = 0; i < sizeof order / sizeof *order; i++) {
        if (named & (1u << order[i]))
            continue;
        m->mem.base = (ZydisRegister)(ZYDIS_REGISTER_RAX + order[i]);
        ZyanUSize n = ZYDIS_MAX_INSTRUCTION_LENGTH;
        if (!ZYAN_SUCCESS(ZydisEncoderEncodeInstruction(&r, to, &n)))
            continue; /* e.g. ah with a REX-only register */
        *len = n;
        return order[i];
    }
    return -1;
}
