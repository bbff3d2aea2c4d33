/*
 * insn.c - decodes one x86-64 instruction with Zydis and summarizes what
 * the static engine needs: control flow, registers written, and memory
 * operands classified as explicit/implicit, stack, vector-indexed or hint.
 */
#include "x86/insn.h"

#include <stdio.h>
#include <string.h>

int x86_decoder_init(x86_decoder *d)
{
    return ZYAN_SUCCESS(ZydisDecoderInit(&d->dec, ZYDIS_MACHINE_MODE_LONG_64,
                                         ZYDIS_STACK_WIDTH_64)) &&
                   ZYAN_SUCCESS(ZydisDecoderInit(&d->lengths, ZYDIS_MACHINE_MODE_LONG_64,
                                                 ZYDIS_STACK_WIDTH_64)) &&
                   ZYAN_SUCCESS(ZydisDecoderEnableMode(&d->lengths,
                                                       ZYDIS_DECODER_MODE_MINIMAL,
                                                       ZYAN_TRUE))
               ? 0 : -1;
}

int x86_gpr_index(ZydisRegister r)
{
    if (r == ZYDIS_REGISTER_NONE)
        return -1;
    if (r == ZYDIS_REGISTER_RIP || r == ZYDIS_REGISTER_EIP)
        return 16;
    ZydisRegister big =
        ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, r);
    if (big >= ZYDIS_REGISTER_RAX && big <= ZYDIS_REGISTER_R15)
        return (int)(big - ZYDIS_REGISTER_RAX);
    return -1;
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

static x86_implicit classify_implicit(const ZydisDecodedInstruction *zi,
                                      const ZydisDecodedOperand *op)
{
    if (op->visibility == ZYDIS_OPERAND_VISIBILITY_EXPLICIT)
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
        m->segment = op->mem.segment;
    m->base = op->mem.base;
    m->index = op->mem.index;
    m->scale = op->mem.index == ZYDIS_REGISTER_NONE ? 0 : op->mem.scale;
    m->disp = op->mem.disp.has_displacement ? op->mem.disp.value : 0;
    if (m->base == ZYDIS_REGISTER_RIP || m->base == ZYDIS_REGISTER_EIP)
        m->target = out->addr + zi->length + (uint64_t)m->disp;
    m->size = op->size / 8;
    m->read = (op->actions & ZYDIS_OPERAND_ACTION_MASK_READ) != 0;
    m->write = (op->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE) != 0;
    m->implicit = (uint8_t)classify_implicit(zi, op);
    /* Zydis gives a push's (call's, enter's) slot as (%rsp): it is below,
     * where rsp will point */
    if (m->implicit == X86_IMPL_STACK && m->write)
        m->disp = -(int64_t)m->size;
    m->stack = m->base == ZYDIS_REGISTER_RSP || m->base == ZYDIS_REGISTER_ESP;
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

/* A direct branch's or call's target from its relative immediate. */
static void note_target(x86_insn *out, const ZydisDecodedOperand *op)
{
    ZyanU64 t;
    if (op->type == ZYDIS_OPERAND_TYPE_IMMEDIATE && op->imm.is_relative &&
        (out->flow == X86_FLOW_JUMP || out->flow == X86_FLOW_JCC ||
         out->flow == X86_FLOW_CALL) &&
        ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&out->zi, op, out->addr, &t)))
        out->target = t;
}

/* flow, is_padding and avx512 of out->zi. */
static void classify(x86_insn *out)
{
    const ZydisDecodedInstruction *zi = &out->zi;
    out->length = zi->length;
    out->mnemonic = (uint16_t)zi->mnemonic;
    out->flow = (uint8_t)classify_flow(zi);
    out->is_padding = is_nop(zi) || zi->mnemonic == ZYDIS_MNEMONIC_INT3;
    out->avx512 = zi->encoding == ZYDIS_INSTRUCTION_ENCODING_EVEX;
}

/* A jump or call with no direct target is an indirect one. */
static void refine_flow(x86_insn *out)
{
    if (out->flow == X86_FLOW_JUMP && out->target == 0)
        out->flow = X86_FLOW_IJUMP;
    if (out->flow == X86_FLOW_CALL && out->target == 0)
        out->flow = X86_FLOW_ICALL;
}

static void summarize(x86_insn *out)
{
    const ZydisDecodedInstruction *zi = &out->zi;
    int nop = is_nop(zi);
    classify(out);
    for (unsigned i = 0; i < zi->operand_count; i++) {
        const ZydisDecodedOperand *op = &out->zops[i];
        if (op->type == ZYDIS_OPERAND_TYPE_REGISTER &&
            (op->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE)) {
            int g = x86_gpr_index(op->reg.value);
            if (g >= 0 && g < 16)
                out->writes |= 1u << g;
        } else if (op->type == ZYDIS_OPERAND_TYPE_MEMORY && !nop &&
                   op->mem.type != ZYDIS_MEMOP_TYPE_AGEN) {
            add_mem(out, zi, op);
        } else {
            note_target(out, op);
        }
    }
    /* The kernel returns in rax; Zydis lists only rcx and r11. */
    if (zi->meta.category == ZYDIS_CATEGORY_SYSCALL ||
        zi->mnemonic == ZYDIS_MNEMONIC_INT)
        out->writes |= 1u << 0 | 1u << 1 | 1u << 11;
    refine_flow(out);
}

int x86_decode_raw(const x86_decoder *d, const uint8_t *buf, size_t len,
                   ZydisDecodedInstruction *zi, ZydisDecodedOperand *zops)
{
    return ZYAN_SUCCESS(ZydisDecoderDecodeFull(&d->dec, buf, len, zi, zops)) ? 0 : -1;
}

int x86_decode(const x86_decoder *d, const uint8_t *buf, size_t len,
               uint64_t addr, x86_insn *out)
{
    out->addr = addr;
    out->nmem = 0;
    out->writes = 0;
    out->target = 0;
    if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&d->dec, buf, len, &out->zi,
                                             out->zops)))
        return -1;
    summarize(out);
    return 0;
}

int x86_decode_flow(const x86_decoder *d, const uint8_t *buf, size_t len,
                    uint64_t addr, x86_insn *out)
{
    ZydisDecoderContext ctx;
    out->addr = addr;
    out->nmem = 0;
    out->writes = 0;
    out->target = 0;
    if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&d->dec, &ctx, buf, len, &out->zi)) ||
        !ZYAN_SUCCESS(ZydisDecoderDecodeOperands(&d->dec, &ctx, &out->zi, out->zops,
                                                 out->zi.operand_count_visible)))
        return -1;
    classify(out);
    for (unsigned i = 0; i < out->zi.operand_count_visible; i++)
        note_target(out, &out->zops[i]);
    refine_flow(out);
    return 0;
}

unsigned x86_decode_length(const x86_decoder *d, const uint8_t *buf, size_t len)
{
    ZydisDecodedInstruction zi;
    return ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&d->lengths, NULL, buf, len, &zi))
               ? zi.length : 0;
}

static uint32_t gpr_bit(ZydisRegister r)
{
    int g = x86_gpr_index(r);
    return g >= 0 && g < 16 ? 1u << g : 0;
}

static int zeroing_idiom(const x86_insn *insn)
{
    const ZydisDecodedOperand *o = insn->zops;
    return (insn->zi.mnemonic == ZYDIS_MNEMONIC_XOR ||
            insn->zi.mnemonic == ZYDIS_MNEMONIC_SUB) &&
           insn->zi.operand_count_visible == 2 &&
           o[0].type == ZYDIS_OPERAND_TYPE_REGISTER &&
           o[1].type == ZYDIS_OPERAND_TYPE_REGISTER &&
           o[0].reg.value == o[1].reg.value &&
           ZydisRegisterGetWidth(ZYDIS_MACHINE_MODE_LONG_64, o[0].reg.value) >= 32;
}

void x86_gpr_use_kill(const x86_insn *insn, uint32_t *use, uint32_t *kill)
{
    *use = *kill = 0;
    for (uint8_t i = 0; i < insn->zi.operand_count; i++) {
        const ZydisDecodedOperand *op = &insn->zops[i];
        if (op->type == ZYDIS_OPERAND_TYPE_MEMORY) {
            *use |= gpr_bit(op->mem.base) | gpr_bit(op->mem.index);
            continue;
        }
        if (op->type != ZYDIS_OPERAND_TYPE_REGISTER)
            continue;
        uint32_t bit = gpr_bit(op->reg.value);
        if (op->actions & ZYDIS_OPERAND_ACTION_MASK_READ)
            *use |= bit;
        if (op->actions == ZYDIS_OPERAND_ACTION_WRITE &&
            ZydisRegisterGetWidth(ZYDIS_MACHINE_MODE_LONG_64, op->reg.value) >= 32)
            *kill |= bit;
        else if (op->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE)
            *use |= bit; /* partial or conditional: the rest lives on */
    }
    if (zeroing_idiom(insn)) {
        *kill |= *use & gpr_bit(insn->zops[0].reg.value);
        *use &= ~gpr_bit(insn->zops[0].reg.value);
    }
    *kill &= ~*use;
}

void x86_format(const x86_insn *insn, char *buf, size_t cap)
{
    static ZydisFormatter fmt;
    static int ready;
    if (!ready) {
        ZydisFormatterInit(&fmt, ZYDIS_FORMATTER_STYLE_ATT);
        ready = 1;
    }
    if (!ZYAN_SUCCESS(ZydisFormatterFormatInstruction(
            &fmt, &insn->zi, insn->zops, insn->zi.operand_count_visible, buf,
            cap, insn->addr, NULL)))
        snprintf(buf, cap, "(bad)");
}
