/*
 * insn.c - decodes one x86-64 instruction with Zydis and summarizes what
 * the static engine needs: control flow, registers written, and memory
 * operands classified as explicit/implicit, stack, vector-indexed or hint.
 */
#include "x86/zydis.h"

#include <stdio.h>
#include <string.h>

int x86_decoder_init(x86_decoder *d)
{
    memset(d, 0, sizeof *d);
    x86_decoders *z = (x86_decoders *)(void *)d->opaque;
    return ZYAN_SUCCESS(ZydisDecoderInit(&z->dec, ZYDIS_MACHINE_MODE_LONG_64,
                                         ZYDIS_STACK_WIDTH_64)) &&
                   ZYAN_SUCCESS(ZydisDecoderInit(&z->lengths, ZYDIS_MACHINE_MODE_LONG_64,
                                                 ZYDIS_STACK_WIDTH_64)) &&
                   ZYAN_SUCCESS(ZydisDecoderEnableMode(&z->lengths,
                                                       ZYDIS_DECODER_MODE_MINIMAL,
                                                       ZYAN_TRUE))
               ? 0 : -1;
}

/* The named operation of zi (x86_op). */
static uint8_t op_of(const ZydisDecodedInstruction *zi)
{
    int string = zi->meta.category == ZYDIS_CATEGORY_STRINGOP;
    switch (zi->mnemonic) {
    case ZYDIS_MNEMONIC_MOV: return X86_OP_MOV;
    case ZYDIS_MNEMONIC_MOVSXD: return X86_OP_MOVSXD;
    case ZYDIS_MNEMONIC_CDQE: return X86_OP_CDQE;
    case ZYDIS_MNEMONIC_LEA: return X86_OP_LEA;
    case ZYDIS_MNEMONIC_ADD: return X86_OP_ADD;
    case ZYDIS_MNEMONIC_SUB: return X86_OP_SUB;
    case ZYDIS_MNEMONIC_CMP: return X86_OP_CMP;
    case ZYDIS_MNEMONIC_POP: return X86_OP_POP;
    case ZYDIS_MNEMONIC_LEAVE: return X86_OP_LEAVE;
    case ZYDIS_MNEMONIC_JMP: return X86_OP_JMP;
    case ZYDIS_MNEMONIC_RET: return X86_OP_RET;
    case ZYDIS_MNEMONIC_SYSRET: case ZYDIS_MNEMONIC_SYSEXIT:
        return X86_OP_SYSRET;
    case ZYDIS_MNEMONIC_JNBE: return X86_OP_JNBE;
    case ZYDIS_MNEMONIC_JNB: return X86_OP_JNB;
    case ZYDIS_MNEMONIC_LOOP: case ZYDIS_MNEMONIC_LOOPE:
    case ZYDIS_MNEMONIC_LOOPNE: case ZYDIS_MNEMONIC_JRCXZ:
    case ZYDIS_MNEMONIC_JECXZ: case ZYDIS_MNEMONIC_JCXZ:
        return X86_OP_LOOP;
    case ZYDIS_MNEMONIC_NOP: return X86_OP_NOP;
    case ZYDIS_MNEMONIC_INT3: return X86_OP_INT3;
    case ZYDIS_MNEMONIC_UD2: return X86_OP_UD2;
    case ZYDIS_MNEMONIC_HLT: return X86_OP_HLT;
    case ZYDIS_MNEMONIC_MOVSB: case ZYDIS_MNEMONIC_MOVSW:
    case ZYDIS_MNEMONIC_MOVSD: case ZYDIS_MNEMONIC_MOVSQ:
        return string ? X86_OP_MOVS : X86_OP_OTHER;
    case ZYDIS_MNEMONIC_STOSB: case ZYDIS_MNEMONIC_STOSW:
    case ZYDIS_MNEMONIC_STOSD: case ZYDIS_MNEMONIC_STOSQ:
        return string ? X86_OP_STOS : X86_OP_OTHER;
    case ZYDIS_MNEMONIC_LODSB: case ZYDIS_MNEMONIC_LODSW:
    case ZYDIS_MNEMONIC_LODSD: case ZYDIS_MNEMONIC_LODSQ:
        return string ? X86_OP_LODS : X86_OP_OTHER;
    case ZYDIS_MNEMONIC_CMPSB: case ZYDIS_MNEMONIC_CMPSW:
    case ZYDIS_MNEMONIC_CMPSD: case ZYDIS_MNEMONIC_CMPSQ:
        return string ? X86_OP_CMPS : X86_OP_OTHER;
    case ZYDIS_MNEMONIC_SCASB: case ZYDIS_MNEMONIC_SCASW:
    case ZYDIS_MNEMONIC_SCASD: case ZYDIS_MNEMONIC_SCASQ:
        return string ? X86_OP_SCAS : X86_OP_OTHER;
    default:
        return X86_OP_OTHER;
    }
}

static x86_flow classify_flow(const ZydisDecodedInstruction *zi)
{
    switch (zi->meta.category) {
    case ZYDIS_CATEGORY_COND_BR:
        return X86_FLOW_JCC;
    case ZYDIS_CATEGORY_UNCOND_BR:
        return X86_FLOW_JUMP;  /* refined to IJUMP below */
    case ZYDIS_CATEGORY_CALL:
        return X86_FLOW_CALL;  /* refined to ICALL below */
    case ZYDIS_CATEGORY_RET:
        return X86_FLOW_RET;
    case ZYDIS_CATEGORY_SYSCALL:
        return X86_FLOW_SYSCALL;
    default:
        break;
    }
    switch (zi->mnemonic) {
    case ZYDIS_MNEMONIC_HLT:
    case ZYDIS_MNEMONIC_UD0:
    case ZYDIS_MNEMONIC_UD1:
    case ZYDIS_MNEMONIC_UD2:
    case ZYDIS_MNEMONIC_INT3:
        return X86_FLOW_STOP;
    case ZYDIS_MNEMONIC_INT:
    case ZYDIS_MNEMONIC_INT1:
    case ZYDIS_MNEMONIC_INTO:
        return X86_FLOW_SYSCALL;
    case ZYDIS_MNEMONIC_IRET:
    case ZYDIS_MNEMONIC_IRETD:
    case ZYDIS_MNEMONIC_IRETQ:
    case ZYDIS_MNEMONIC_SYSRET:
    case ZYDIS_MNEMONIC_SYSEXIT:
        return X86_FLOW_RET;
    default:
        return X86_FLOW_NEXT;
    }
}

static int is_hint(const ZydisDecodedInstruction *zi)
{
    if (zi->meta.category == ZYDIS_CATEGORY_PREFETCH)
        return 1;
    switch (zi->mnemonic) {
    case ZYDIS_MNEMONIC_CLFLUSH:
    case ZYDIS_MNEMONIC_CLFLUSHOPT:
    case ZYDIS_MNEMONIC_CLWB:
    case ZYDIS_MNEMONIC_CLDEMOTE:
        return 1;
    default:
        return 0;
    }
}

static int is_stack_op(const ZydisDecodedInstruction *zi)
{
    switch (zi->meta.category) {
    case ZYDIS_CATEGORY_PUSH:
    case ZYDIS_CATEGORY_POP:
    case ZYDIS_CATEGORY_CALL:
    case ZYDIS_CATEGORY_RET:
        return 1;
    default:
        return zi->mnemonic == ZYDIS_MNEMONIC_ENTER ||
               zi->mnemonic == ZYDIS_MNEMONIC_LEAVE;
    }
}

int x86_zydis_mask_store(ZydisMnemonic m)
{
    switch (m) {
    case ZYDIS_MNEMONIC_MASKMOVQ:
    case ZYDIS_MNEMONIC_MASKMOVDQU:
    case ZYDIS_MNEMONIC_VMASKMOVDQU:
    case ZYDIS_MNEMONIC_VMASKMOVPS:
    case ZYDIS_MNEMONIC_VMASKMOVPD:
    case ZYDIS_MNEMONIC_VPMASKMOVD:
    case ZYDIS_MNEMONIC_VPMASKMOVQ:
        return 1;
    default:
        return 0;
    }
}

static x86_implicit classify_implicit(const ZydisDecodedInstruction *zi,
                                      const ZydisDecodedOperand *op)
{
    /* maskmovq and maskmovdqu store through (%rdi) as an explicit
     * operand would be addressed: modelled as one */
    if (op->visibility == ZYDIS_OPERAND_VISIBILITY_EXPLICIT ||
        x86_zydis_mask_store(zi->mnemonic))
        return X86_IMPL_NONE;
    if (zi->meta.category == ZYDIS_CATEGORY_STRINGOP)
        return X86_IMPL_STRING;
    if (is_stack_op(zi))
        return X86_IMPL_STACK;
    return X86_IMPL_OTHER;
}

static void add_mem(x86_insn *out, const ZydisDecodedInstruction *zi,
                    const ZydisDecodedOperand *op)
{
    if (out->nmem >= X86_MAX_MEM)
        return;
    x86_mem *m = &out->mem[out->nmem++];
    memset(m, 0, sizeof *m);
    if (op->mem.segment == ZYDIS_REGISTER_FS ||
        op->mem.segment == ZYDIS_REGISTER_GS)
        m->segment = x86_reg_from_zydis(op->mem.segment);
    m->base = x86_reg_from_zydis(op->mem.base);
    m->index = x86_reg_from_zydis(op->mem.index);
    m->scale = op->mem.index == ZYDIS_REGISTER_NONE ? 0 : op->mem.scale;
    m->disp = op->mem.disp.has_displacement ? op->mem.disp.value : 0;
    if (m->base == X86_REG_RIP || m->base == X86_REG_EIP)
        m->target = out->addr + zi->length + (uint64_t)m->disp;
    m->size = op->size / 8;
    m->read = (op->actions & ZYDIS_OPERAND_ACTION_MASK_READ) != 0;
    m->write = (op->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE) != 0;
    m->implicit = (uint8_t)classify_implicit(zi, op);
    /* Zydis gives a push's (call's, enter's) slot as (%rsp): it is below,
     * where rsp will point */
    if (m->implicit == X86_IMPL_STACK && m->write)
        m->disp = -(int64_t)m->size;
    m->stack = op->mem.base == ZYDIS_REGISTER_RSP || op->mem.base == ZYDIS_REGISTER_ESP;
    if (op->mem.type == ZYDIS_MEMOP_TYPE_VSIB)
        m->kind = X86_MEM_VSIB;
    else if (op->mem.type != ZYDIS_MEMOP_TYPE_MEM)
        m->kind = X86_MEM_OTHER;
    else if (is_hint(zi))
        m->kind = X86_MEM_HINT;
    else
        m->kind = X86_MEM_ACCESS;
}

static int is_nop(const ZydisDecodedInstruction *zi)
{
    return zi->meta.category == ZYDIS_CATEGORY_NOP ||
           zi->meta.category == ZYDIS_CATEGORY_WIDENOP;
}

static uint8_t actions_of(ZydisOperandActions a)
{
    return (uint8_t)(((a & ZYDIS_OPERAND_ACTION_READ) ? X86_ACT_READ : 0) |
                     ((a & ZYDIS_OPERAND_ACTION_WRITE) ? X86_ACT_WRITE : 0) |
                     ((a & ZYDIS_OPERAND_ACTION_CONDREAD) ? X86_ACT_CONDREAD : 0) |
                     ((a & ZYDIS_OPERAND_ACTION_CONDWRITE) ? X86_ACT_CONDWRITE : 0));
}

static uint8_t memop_of(ZydisMemoryOperandType t)
{
    switch (t) {
    case ZYDIS_MEMOP_TYPE_AGEN: return X86_MEMOP_AGEN;
    case ZYDIS_MEMOP_TYPE_MIB: return X86_MEMOP_MIB;
    case ZYDIS_MEMOP_TYPE_VSIB: return X86_MEMOP_VSIB;
    default: return X86_MEMOP_MEM;
    }
}

/* Zydis's operand op of zi (at addr) as an x86_operand. */
static void put_operand(x86_operand *o, const ZydisDecodedInstruction *zi,
                        const ZydisDecodedOperand *op, uint64_t addr)
{
    ZyanU64 t;
    *o = (x86_operand){ .size = op->size, .actions = actions_of(op->actions) };
    switch (op->type) {
    case ZYDIS_OPERAND_TYPE_REGISTER:
        o->type = X86_OPND_REG;
        o->reg = x86_reg_from_zydis(op->reg.value);
        break;
    case ZYDIS_OPERAND_TYPE_MEMORY:
        o->type = X86_OPND_MEM;
        o->mem_type = memop_of(op->mem.type);
        o->segment = x86_reg_from_zydis(op->mem.segment);
        o->base = x86_reg_from_zydis(op->mem.base);
        o->index = x86_reg_from_zydis(op->mem.index);
        o->scale = op->mem.scale;
        o->value = op->mem.disp.value;
        /* as ZydisCalcAbsoluteAddress has it */
        if (op->mem.base == ZYDIS_REGISTER_RIP)
            o->target = addr + zi->length + (uint64_t)op->mem.disp.value;
        else if (op->mem.base == ZYDIS_REGISTER_EIP)
            o->target = (uint32_t)(addr + zi->length + (uint64_t)op->mem.disp.value);
        break;
    case ZYDIS_OPERAND_TYPE_IMMEDIATE:
        o->type = X86_OPND_IMM;
        o->value = op->imm.value.s;
        o->imm_relative = op->imm.is_relative;
        if (op->imm.is_relative && ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(zi, op, addr, &t)))
            o->target = t;
        break;
    case ZYDIS_OPERAND_TYPE_POINTER:
        o->type = X86_OPND_PTR;
        break;
    default:
        break;
    }
}

/* A direct branch's or call's target from its relative immediate. */
static void note_target(x86_insn *out, const x86_operand *op)
{
    if (op->type == X86_OPND_IMM && op->imm_relative &&
        (out->flow == X86_FLOW_JUMP || out->flow == X86_FLOW_JCC ||
         out->flow == X86_FLOW_CALL))
        out->target = op->target;
}

/* Everything of zi (at out->addr, its bytes buf) but operands, mem[],
 * writes and target. */
static void classify(x86_insn *out, const ZydisDecodedInstruction *zi,
                     const uint8_t *buf)
{
    out->length = zi->length;
    out->mnemonic = (uint16_t)zi->mnemonic;
    out->op = op_of(zi);
    out->flow = (uint8_t)classify_flow(zi);
    out->is_padding = is_nop(zi) || zi->mnemonic == ZYDIS_MNEMONIC_INT3;
    out->avx512 = zi->encoding == ZYDIS_INSTRUCTION_ENCODING_EVEX;
    out->addr32 = zi->address_width == 32;
    out->rep = (zi->attributes & ZYDIS_ATTRIB_HAS_REPNE) ? X86_REP_NE
               : (zi->attributes & (ZYDIS_ATTRIB_HAS_REP | ZYDIS_ATTRIB_HAS_REPE))
                   ? X86_REP_E : X86_REP_NONE;
    out->nvisible = zi->operand_count_visible;
    out->branch_at = zi->raw.imm[0].offset;
    out->branch_size = zi->raw.imm[0].is_relative ? zi->raw.imm[0].size : 0;
    out->disp_at = zi->raw.disp.offset;
    out->disp_size = zi->raw.disp.size;
    memcpy(out->bytes, buf, zi->length);
}

/* A jump or call with no direct target is an indirect one. */
static void refine_flow(x86_insn *out)
{
    if (out->flow == X86_FLOW_JUMP && out->target == 0)
        out->flow = X86_FLOW_IJUMP;
    if (out->flow == X86_FLOW_CALL && out->target == 0)
        out->flow = X86_FLOW_ICALL;
}

static void summarize(x86_insn *out, const ZydisDecodedInstruction *zi,
                      const ZydisDecodedOperand *zops)
{
    int nop = is_nop(zi);
    out->nops = zi->operand_count;
    for (unsigned i = 0; i < zi->operand_count; i++) {
        const ZydisDecodedOperand *op = &zops[i];
        put_operand(&out->ops[i], zi, op, out->addr);
        if (op->type == ZYDIS_OPERAND_TYPE_REGISTER &&
            (op->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE)) {
            int g = x86_gpr_index(out->ops[i].reg);
            if (g >= 0 && g < 16)
                out->writes |= 1u << g;
        } else if (op->type == ZYDIS_OPERAND_TYPE_MEMORY && !nop &&
                   op->mem.type != ZYDIS_MEMOP_TYPE_AGEN) {
            add_mem(out, zi, op);
        } else {
            note_target(out, &out->ops[i]);
        }
    }
    /* The kernel returns in rax; Zydis lists only rcx and r11. */
    if (zi->meta.category == ZYDIS_CATEGORY_SYSCALL ||
        zi->mnemonic == ZYDIS_MNEMONIC_INT)
        out->writes |= 1u << 0 | 1u << 1 | 1u << 11;
    refine_flow(out);
}

int x86_decode(const x86_decoder *d, const uint8_t *buf, size_t len,
               uint64_t addr, x86_insn *out)
{
    ZydisDecodedInstruction zi;
    ZydisDecodedOperand zops[ZYDIS_MAX_OPERAND_COUNT];
    out->addr = addr;
    out->nmem = 0;
    out->writes = 0;
    out->target = 0;
    if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&x86_decoders_of(d)->dec, buf, len,
                                             &zi, zops)))
        return -1;
    classify(out, &zi, buf);
    summarize(out, &zi, zops);
    return 0;
}

int x86_decode_flow(const x86_decoder *d, const uint8_t *buf, size_t len,
                    uint64_t addr, x86_insn *out)
{
    ZydisDecoderContext ctx;
    ZydisDecodedInstruction zi;
    ZydisDecodedOperand zops[ZYDIS_MAX_OPERAND_COUNT_VISIBLE];
    const ZydisDecoder *dec = &x86_decoders_of(d)->dec;
    out->addr = addr;
    out->nmem = 0;
    out->writes = 0;
    out->target = 0;
    if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(dec, &ctx, buf, len, &zi)) ||
        !ZYAN_SUCCESS(ZydisDecoderDecodeOperands(dec, &ctx, &zi, zops,
                                                 zi.operand_count_visible)))
        return -1;
    classify(out, &zi, buf);
    out->nops = zi.operand_count_visible;
    for (unsigned i = 0; i < zi.operand_count_visible; i++) {
        put_operand(&out->ops[i], &zi, &zops[i], addr);
        note_target(out, &out->ops[i]);
    }
    refine_flow(out);
    return 0;
}

unsigned x86_decode_length(const x86_decoder *d, const uint8_t *buf, size_t len)
{
    ZydisDecodedInstruction zi;
    return ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&x86_decoders_of(d)->lengths,
                                                      NULL, buf, len, &zi))
               ? zi.length : 0;
}

/* Whether a visible operand of zi (decoded as far as ctx) reads or writes
 * memory: its operands are decoded only where a modrm byte or its
 * absence allows a memory operand. */
static int has_memory(const ZydisDecoder *dec, const ZydisDecoderContext *ctx,
                      const ZydisDecodedInstruction *zi)
{
    ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT_VISIBLE];
    if (!zi->operand_count_visible || zi->mnemonic == ZYDIS_MNEMONIC_NOP ||
        ((zi->attributes & ZYDIS_ATTRIB_HAS_MODRM) && zi->raw.modrm.mod == 3) ||
        !ZYAN_SUCCESS(ZydisDecoderDecodeOperands(dec, ctx, zi, ops,
                                                 zi->operand_count_visible)))
        return 0;
    for (uint8_t i = 0; i < zi->operand_count_visible; i++)
        if (ops[i].type == ZYDIS_OPERAND_TYPE_MEMORY &&
            ops[i].mem.type == ZYDIS_MEMOP_TYPE_MEM)
            return 1;
    return 0;
}

int x86_scan(const x86_decoder *d, const uint8_t *p, size_t avail, uint64_t at,
             unsigned what, x86_scanned *out)
{
    const x86_decoders *z = x86_decoders_of(d);
    const ZydisDecoder *dec = (what & X86_SCAN_MINIMAL) ? &z->lengths : &z->dec;
    ZydisDecoderContext ctx;
    ZydisDecodedInstruction zi;
    if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(dec, &ctx, p, avail, &zi)))
        return -1;
    memset(out, 0, sizeof *out);
    out->mnemonic = (uint16_t)zi.mnemonic;
    out->op = op_of(&zi);
    out->flow = (uint8_t)classify_flow(&zi);
    out->length = zi.length;
    out->disp_at = zi.raw.disp.offset;
    out->disp_size = zi.raw.disp.size;
    out->branch = zi.raw.imm[0].size && zi.raw.imm[0].is_relative;
    if (out->branch)
        out->target = at + zi.length + (zi.raw.imm[0].is_signed
                                            ? (uint64_t)zi.raw.imm[0].value.s
                                            : zi.raw.imm[0].value.u);
    if ((zi.attributes & ZYDIS_ATTRIB_HAS_MODRM) && zi.raw.modrm.mod == 0 &&
        zi.raw.modrm.rm == 5 && zi.raw.disp.size == 32 && zi.address_width == 64)
        out->rip = at + zi.length + (uint64_t)zi.raw.disp.value;
    if ((what & X86_SCAN_MEMORY) && !(what & X86_SCAN_MINIMAL))
        out->memory = (uint8_t)has_memory(dec, &ctx, &zi);
    return 0;
}

static uint32_t gpr_bit(x86_reg r)
{
    int g = x86_gpr_index(r);
    return g >= 0 && g < 16 ? 1u << g : 0;
}

static int zeroing_idiom(const x86_insn *insn)
{
    const x86_operand *o = insn->ops;
    return (insn->mnemonic == ZYDIS_MNEMONIC_XOR ||
            insn->mnemonic == ZYDIS_MNEMONIC_SUB) &&
           insn->nvisible == 2 && o[0].type == X86_OPND_REG &&
           o[1].type == X86_OPND_REG && o[0].reg == o[1].reg &&
           x86_reg_width(o[0].reg) >= 32;
}

void x86_gpr_use_kill(const x86_insn *insn, uint32_t *use, uint32_t *kill)
{
    *use = *kill = 0;
    for (uint8_t i = 0; i < insn->nops; i++) {
        const x86_operand *op = &insn->ops[i];
        if (op->type == X86_OPND_MEM) {
            *use |= gpr_bit(op->base) | gpr_bit(op->index);
            continue;
        }
        if (op->type != X86_OPND_REG)
            continue;
        uint32_t bit = gpr_bit(op->reg);
        if (op->actions & (X86_ACT_READ | X86_ACT_CONDREAD))
            *use |= bit;
        if (op->actions == X86_ACT_WRITE && x86_reg_width(op->reg) >= 32)
            *kill |= bit;
        else if (op->actions & (X86_ACT_WRITE | X86_ACT_CONDWRITE))
            *use |= bit; /* partial or conditional: the rest lives on */
    }
    if (zeroing_idiom(insn)) {
        *kill |= *use & gpr_bit(insn->ops[0].reg);
        *use &= ~gpr_bit(insn->ops[0].reg);
    }
    *kill &= ~*use;
}

int x86_zydis_decode(const x86_insn *insn, ZydisDecodedInstruction *zi,
                     ZydisDecodedOperand zops[ZYDIS_MAX_OPERAND_COUNT])
{
    ZydisDecoder dec;
    return ZYAN_SUCCESS(ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64,
                                         ZYDIS_STACK_WIDTH_64)) &&
                   ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, insn->bytes, insn->length,
                                                       zi, zops))
               ? 0 : -1;
}

static void format(const x86_insn *insn, ZyanU64 runtime, char *buf, size_t cap)
{
    static ZydisFormatter fmt;
    static int ready;
    ZydisDecodedInstruction zi;
    ZydisDecodedOperand zops[ZYDIS_MAX_OPERAND_COUNT];
    if (!ready) {
        ZydisFormatterInit(&fmt, ZYDIS_FORMATTER_STYLE_ATT);
        ready = 1;
    }
    if (x86_zydis_decode(insn, &zi, zops) != 0 ||
        !ZYAN_SUCCESS(ZydisFormatterFormatInstruction(
            &fmt, &zi, zops, zi.operand_count_visible, buf, cap, runtime, NULL)))
        snprintf(buf, cap, "(bad)");
}

void x86_format(const x86_insn *insn, char *buf, size_t cap)
{
    format(insn, insn->addr, buf, cap);
}

void x86_format_relative(const x86_insn *insn, char *buf, size_t cap)
{
    format(insn, ZYDIS_RUNTIME_ADDRESS_NONE, buf, cap);
}
