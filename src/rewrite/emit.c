/*
 * rewrite/emit.c - encodes the rewriter's code with Zydis's encoder.  Every
 * instruction emitted on the logging path leaves the flags alone (lea,
 * mov, push, pop, call, ret, jrcxz), so no site needs to save them; the
 * stub's slow path, which calls C, saves everything.
 */
#include "rewrite/emit.h"

#include <string.h>

#define RED_ZONE 128
#define TAG_PLACEHOLDER 0x7f000000 /* forces a disp32 the runtime fills */
#define TLS_PLACEHOLDER 0x7f000000
#define XSAVE_AREA 4096
#define XSAVE_MASK 0xe7            /* x87, SSE, AVX, AVX-512 state */

static void request(ZydisEncoderRequest *r, ZydisMnemonic m, int nops)
{
    memset(r, 0, sizeof *r);
    r->machine_mode = ZYDIS_MACHINE_MODE_LONG_64;
    r->mnemonic = m;
    r->operand_count = (ZyanU8)nops;
}

static void op_reg(ZydisEncoderOperand *o, ZydisRegister reg)
{
    o->type = ZYDIS_OPERAND_TYPE_REGISTER;
    o->reg.value = reg;
}

static void op_mem(ZydisEncoderOperand *o, ZydisRegister base,
                   ZydisRegister index, uint8_t scale, int64_t disp,
                   uint16_t size)
{
    o->type = ZYDIS_OPERAND_TYPE_MEMORY;
    o->mem.base = base;
    o->mem.index = index;
    o->mem.scale = index == ZYDIS_REGISTER_NONE ? 0 : scale;
    o->mem.displacement = disp;
    o->mem.size = size;
}

static void op_imm(ZydisEncoderOperand *o, int64_t v)
{
    o->type = ZYDIS_OPERAND_TYPE_IMMEDIATE;
    o->imm.s = v;
}

/* Encodes r at the buffer's end; returns the offset it starts at. */
static size_t put(code_buf *b, ZydisEncoderRequest *r)
{
    size_t at = b->len;
    ZyanUSize n = b->cap - b->len;
    if (b->failed || n < ZYDIS_MAX_INSTRUCTION_LENGTH ||
        !ZYAN_SUCCESS(ZydisEncoderEncodeInstructionAbsolute(
            r, b->p + b->len, &n, code_here(b)))) {
        b->failed = 1;
        return at;
    }
    b->len += n;
    return at;
}

static void put1(code_buf *b, ZydisMnemonic m, ZydisRegister reg)
{
    ZydisEncoderRequest r;
    request(&r, m, reg == ZYDIS_REGISTER_NONE ? 0 : 1);
    if (reg != ZYDIS_REGISTER_NONE)
        op_reg(&r.operands[0], reg);
    put(b, &r);
}

/* lea reg, [base + disp] */
static void lea(code_buf *b, ZydisRegister reg, ZydisRegister base,
                int64_t disp)
{
    ZydisEncoderRequest r;
    request(&r, ZYDIS_MNEMONIC_LEA, 2);
    op_reg(&r.operands[0], reg);
    op_mem(&r.operands[1], base, ZYDIS_REGISTER_NONE, 0, disp, 8);
    put(b, &r);
}

/* mov between reg and %fs:disp32; returns the disp32's offset. */
static size_t mov_fs(code_buf *b, ZydisRegister reg, int to_fs, int64_t disp)
{
    ZydisEncoderRequest r;
    request(&r, ZYDIS_MNEMONIC_MOV, 2);
    r.prefixes = ZYDIS_ATTRIB_HAS_SEGMENT_FS;
    op_reg(&r.operands[to_fs ? 1 : 0], reg);
    op_mem(&r.operands[to_fs ? 0 : 1], ZYDIS_REGISTER_NONE,
           ZYDIS_REGISTER_NONE, 0, disp, 8);
    put(b, &r);
    return b->len - 4; /* absolute addressing ends with its disp32 */
}

static void mov_store(code_buf *b, ZydisRegister base, int64_t disp,
                      ZydisRegister reg, uint16_t size)
{
    ZydisEncoderRequest r;
    request(&r, ZYDIS_MNEMONIC_MOV, 2);
    op_mem(&r.operands[0], base, ZYDIS_REGISTER_NONE, 0, disp, size);
    op_reg(&r.operands[1], reg);
    put(b, &r);
}

static void mov_imm(code_buf *b, ZydisRegister reg, int64_t v)
{
    ZydisEncoderRequest r;
    request(&r, ZYDIS_MNEMONIC_MOV, 2);
    op_reg(&r.operands[0], reg);
    op_imm(&r.operands[1], v);
    put(b, &r);
}

static void branch(code_buf *b, ZydisMnemonic m, uint64_t target)
{
    ZydisEncoderRequest r;
    request(&r, m, 1);
    op_imm(&r.operands[0], (int64_t)target);
    put(b, &r);
}

int emit_nop(code_buf *b)
{
    ZydisEncoderRequest r;
    request(&r, ZYDIS_MNEMONIC_NOP, 0);
    put(b, &r);
    return b->failed ? -1 : 0;
}

int emit_check_slot(code_buf *b)
{
    ZydisEncoderRequest r;
    request(&r, ZYDIS_MNEMONIC_JMP, 1);
    r.branch_width = ZYDIS_BRANCH_WIDTH_8;
    op_imm(&r.operands[0], (int64_t)(code_here(b) + 2));
    put(b, &r);
    return b->failed ? -1 : 0;
}

int emit_jump(code_buf *b, uint64_t target)
{
    branch(b, ZYDIS_MNEMONIC_JMP, target);
    return b->failed ? -1 : 0;
}

int emit_jcc(code_buf *b, const x86_insn *insn)
{
    ZydisEncoderRequest r;
    if (!ZYAN_SUCCESS(ZydisEncoderDecodedInstructionToEncoderRequest(
            &insn->zi, insn->zops, insn->zi.operand_count_visible, &r)))
        return b->failed = 1, -1;
    r.branch_type = ZYDIS_BRANCH_TYPE_NONE;
    r.branch_width = ZYDIS_BRANCH_WIDTH_NONE;
    r.operands[0].imm.u = insn->target; /* absolute: the encoder makes it rel */
    put(b, &r);
    return b->failed ? -1 : 0;
}

/*   push %rax; push %rax; lea ret(%rip), %rax; mov %rax, 8(%rsp);
 *   pop %rax; jmp target          (flags untouched, rax restored) */
int emit_call(code_buf *b, uint64_t target, uint64_t ret)
{
    put1(b, ZYDIS_MNEMONIC_PUSH, ZYDIS_REGISTER_RAX);
    put1(b, ZYDIS_MNEMONIC_PUSH, ZYDIS_REGISTER_RAX);
    lea(b, ZYDIS_REGISTER_RAX, ZYDIS_REGISTER_RIP, (int64_t)ret);
    mov_store(b, ZYDIS_REGISTER_RSP, 8, ZYDIS_REGISTER_RAX, 8);
    put1(b, ZYDIS_MNEMONIC_POP, ZYDIS_REGISTER_RAX);
    branch(b, ZYDIS_MNEMONIC_JMP, target);
    return b->failed ? -1 : 0;
}

static void note_tls(mt_rewrite_header *h, code_buf *b, size_t at,
                     uint64_t header_vaddr, uint8_t field)
{
    if (h->ntls < MT_TLS_PATCHES) {
        h->tls_disp[h->ntls] = b->base + at - header_vaddr;
        h->tls_field[h->ntls++] = field;
    } else {
        b->failed = 1;
    }
}

static const ZydisRegister saved_by_flush[] = {
    ZYDIS_REGISTER_RAX, ZYDIS_REGISTER_RCX, ZYDIS_REGISTER_RDX,
    ZYDIS_REGISTER_RSI, ZYDIS_REGISTER_RDI, ZYDIS_REGISTER_R8,
    ZYDIS_REGISTER_R9,  ZYDIS_REGISTER_R10, ZYDIS_REGISTER_R11,
    ZYDIS_REGISTER_RBX,
};
#define NSAVED (sizeof saved_by_flush / sizeof *saved_by_flush)

/* The stub: in eax the site, in rdx the address; clobbers rcx.  The
 * thread's buffer ends at an MT_BUFFER_ALIGN boundary, so a cursor whose
 * low 16 bits are 0 has no room (or is 0: no buffer yet); only the
 * cursor is stored per entry, no count of the room left.
 *
 *   stub:  ret                          (the runtime makes it a nop)
 *          lea  TAG(%rax), %eax
 *   again: mov  %fs:CURSOR, %rcx
 *          movzwl %cx, %ecx
 *          jrcxz full
 *          mov  %fs:CURSOR, %rcx
 *          mov  %eax, (%rcx)
 *          mov  %rdx, 8(%rcx)
 *          lea  16(%rcx), %rcx
 *          mov  %rcx, %fs:CURSOR
 *          ret
 *   full:  save flags, registers and extended state; call *flush; restore;
 *          jmp again
 */
int emit_stub(code_buf *b, uint64_t header_vaddr, uint64_t flush_slot,
              mt_rewrite_header *h)
{
    _Static_assert(MT_BUFFER_ALIGN == 1u << 16, "movzwl tests 16 bits");
    h->stub = code_here(b) - header_vaddr;
    put1(b, ZYDIS_MNEMONIC_RET, ZYDIS_REGISTER_NONE);
    lea(b, ZYDIS_REGISTER_EAX, ZYDIS_REGISTER_RAX, TAG_PLACEHOLDER);
    h->tag_disp = code_here(b) - 4 - header_vaddr;
    uint64_t again = code_here(b);
    note_tls(h, b, mov_fs(b, ZYDIS_REGISTER_RCX, 0, TLS_PLACEHOLDER),
             header_vaddr, MT_TLS_CURSOR);
    ZydisEncoderRequest r;
    request(&r, ZYDIS_MNEMONIC_MOVZX, 2); /* movzwl %cx, %ecx */
    op_reg(&r.operands[0], ZYDIS_REGISTER_ECX);
    op_reg(&r.operands[1], ZYDIS_REGISTER_CX);
    put(b, &r);
    size_t jrcxz_at = b->len;
    branch(b, ZYDIS_MNEMONIC_JRCXZ, code_here(b) + 2);
    note_tls(h, b, mov_fs(b, ZYDIS_REGISTER_RCX, 0, TLS_PLACEHOLDER),
             header_vaddr, MT_TLS_CURSOR);
    mov_store(b, ZYDIS_REGISTER_RCX, 0, ZYDIS_REGISTER_EAX, 4);
    mov_store(b, ZYDIS_REGISTER_RCX, 8, ZYDIS_REGISTER_RDX, 8);
    lea(b, ZYDIS_REGISTER_RCX, ZYDIS_REGISTER_RCX, (int64_t)sizeof(mt_entry));
    note_tls(h, b, mov_fs(b, ZYDIS_REGISTER_RCX, 1, TLS_PLACEHOLDER),
             header_vaddr, MT_TLS_CURSOR);
    put1(b, ZYDIS_MNEMONIC_RET, ZYDIS_REGISTER_NONE);
    if (b->failed)
        return -1;
    /* full: jrcxz's rel8 reaches it (the fast path is short) */
    int64_t rel = (int64_t)(code_here(b) - (b->base + jrcxz_at + 2));
    if (b->p[jrcxz_at] != 0xe3 || rel > 127)
        return -1;
    b->p[jrcxz_at + 1] = (uint8_t)rel;

    put1(b, ZYDIS_MNEMONIC_PUSHFQ, ZYDIS_REGISTER_NONE);
    for (size_t i = 0; i < NSAVED; i++)
        put1(b, ZYDIS_MNEMONIC_PUSH, saved_by_flush[i]);
    request(&r, ZYDIS_MNEMONIC_MOV, 2); /* mov %rsp, %rbx */
    op_reg(&r.operands[0], ZYDIS_REGISTER_RBX);
    op_reg(&r.operands[1], ZYDIS_REGISTER_RSP);
    put(b, &r);
    request(&r, ZYDIS_MNEMONIC_AND, 2); /* and $-64, %rsp */
    op_reg(&r.operands[0], ZYDIS_REGISTER_RSP);
    op_imm(&r.operands[1], -64);
    put(b, &r);
    lea(b, ZYDIS_REGISTER_RSP, ZYDIS_REGISTER_RSP, -XSAVE_AREA);
    /* xrstor faults unless the header xsave leaves alone is zero */
    mov_imm(b, ZYDIS_REGISTER_ECX, 0);
    for (int k = 0; k < 8; k++)
        mov_store(b, ZYDIS_REGISTER_RSP, 512 + 8 * k, ZYDIS_REGISTER_RCX, 8);
    for (int pass = 0; pass < 2; pass++) {
        mov_imm(b, ZYDIS_REGISTER_EAX, XSAVE_MASK);
        mov_imm(b, ZYDIS_REGISTER_EDX, 0);
        request(&r, pass ? ZYDIS_MNEMONIC_XRSTOR64 : ZYDIS_MNEMONIC_XSAVE64, 1);
        op_mem(&r.operands[0], ZYDIS_REGISTER_RSP, ZYDIS_REGISTER_NONE, 0, 0,
               0);
        put(b, &r);
        if (pass == 0) { /* call *flush_slot(%rip) */
            request(&r, ZYDIS_MNEMONIC_CALL, 1);
            op_mem(&r.operands[0], ZYDIS_REGISTER_RIP, ZYDIS_REGISTER_NONE, 0,
                   (int64_t)flush_slot, 8);
            put(b, &r);
        }
    }
    request(&r, ZYDIS_MNEMONIC_MOV, 2); /* mov %rbx, %rsp */
    op_reg(&r.operands[0], ZYDIS_REGISTER_RSP);
    op_reg(&r.operands[1], ZYDIS_REGISTER_RBX);
    put(b, &r);
    for (size_t i = NSAVED; i-- > 0;)
        put1(b, ZYDIS_MNEMONIC_POP, saved_by_flush[i]);
    put1(b, ZYDIS_MNEMONIC_POPFQ, ZYDIS_REGISTER_NONE);
    branch(b, ZYDIS_MNEMONIC_JMP, again);
    return b->failed ? -1 : 0;
}

static const ZydisRegister scratch[] = {
    ZYDIS_REGISTER_RAX, ZYDIS_REGISTER_RCX, ZYDIS_REGISTER_RDX,
};

/* Steps below the red zone and saves the live scratch registers; returns
 * how many bytes rsp moved. */
static int64_t frame_enter(code_buf *b, unsigned live)
{
    int64_t moved = RED_ZONE;
    lea(b, ZYDIS_REGISTER_RSP, ZYDIS_REGISTER_RSP, -RED_ZONE);
    for (unsigned i = 0; i < 3; i++)
        if (live & (1u << i)) {
            put1(b, ZYDIS_MNEMONIC_PUSH, scratch[i]);
            moved += 8;
        }
    return moved;
}

static void frame_leave(code_buf *b, unsigned live)
{
    for (unsigned i = 3; i-- > 0;)
        if (live & (1u << i))
            put1(b, ZYDIS_MNEMONIC_POP, scratch[i]);
    lea(b, ZYDIS_REGISTER_RSP, ZYDIS_REGISTER_RSP, RED_ZONE);
}

static ZydisRegister widen(ZydisRegister r)
{
    if (r >= ZYDIS_REGISTER_EAX && r <= ZYDIS_REGISTER_R15D)
        return (ZydisRegister)(r - ZYDIS_REGISTER_EAX + ZYDIS_REGISTER_RAX);
    return r;
}

/* The operand m of insn as an encoder operand once rsp has moved down by
 * `moved` bytes (rip-relative: the absolute target; 32-bit addressing:
 * 64-bit registers, the caller truncates). */
static void op_original(ZydisEncoderOperand *o, const x86_mem *m,
                        int64_t moved, uint16_t size)
{
    int64_t disp = m->disp;
    if (m->base == ZYDIS_REGISTER_RSP)
        disp += moved;
    else if (m->base == ZYDIS_REGISTER_RIP)
        disp = (int64_t)m->target; /* absolute: the encoder makes it rel */
    op_mem(o, widen(m->base), widen(m->index), m->scale, disp, size);
}

/*
 *   lea  -128(%rsp), %rsp
 *   push the live ones of %rax, %rcx, %rdx
 *   lea  EA, %rdx              (rsp-based: + what rsp moved)
 *   [mov %edx, %edx]                              for 32-bit addressing
 *   [mov %fs:0, %rcx; lea (%rdx,%rcx), %rdx]     for %fs: operands
 *   mov  $site, %eax
 *   call stub
 *   pop what was pushed; lea 128(%rsp), %rsp
 */
int emit_log(code_buf *b, const x86_insn *insn, const x86_mem *m,
             uint32_t site, uint64_t stub_addr, unsigned live)
{
    if (m->segment == ZYDIS_REGISTER_GS)
        return -1;
    int64_t moved = frame_enter(b, live);
    ZydisEncoderRequest r;
    request(&r, ZYDIS_MNEMONIC_LEA, 2);
    op_reg(&r.operands[0], ZYDIS_REGISTER_RDX);
    op_original(&r.operands[1], m, moved, 8);
    put(b, &r);
    if (insn->zi.address_width == 32) {
        request(&r, ZYDIS_MNEMONIC_MOV, 2); /* mov %edx, %edx */
        op_reg(&r.operands[0], ZYDIS_REGISTER_EDX);
        op_reg(&r.operands[1], ZYDIS_REGISTER_EDX);
        put(b, &r);
    }
    if (m->segment == ZYDIS_REGISTER_FS) {
        mov_fs(b, ZYDIS_REGISTER_RCX, 0, 0);
        request(&r, ZYDIS_MNEMONIC_LEA, 2);
        op_reg(&r.operands[0], ZYDIS_REGISTER_RDX);
        op_mem(&r.operands[1], ZYDIS_REGISTER_RDX, ZYDIS_REGISTER_RCX, 1, 0, 8);
        put(b, &r);
    }
    mov_imm(b, ZYDIS_REGISTER_EAX, site);
    branch(b, ZYDIS_MNEMONIC_CALL, stub_addr);
    frame_leave(b, live);
    return b->failed ? -1 : 0;
}

int emit_count(code_buf *b, uint32_t block, uint64_t count_stub, unsigned live)
{
    frame_enter(b, live);
    mov_imm(b, ZYDIS_REGISTER_EAX, block);
    branch(b, ZYDIS_MNEMONIC_CALL, count_stub);
    frame_leave(b, live);
    return b->failed ? -1 : 0;
}

/* The count stub: in eax the block; clobbers rcx and rdx.
 *
 *   stub:  ret                          (the runtime makes it a nop)
 *          mov  slot(%rip), %rcx
 *          mov  (%rcx,%rax,8), %rdx
 *          lea  1(%rdx), %rdx
 *          mov  %rdx, (%rcx,%rax,8)
 *          ret
 * Counters are not atomic: threads running one block at the same moment
 * may lose a count (as gcc's -fprofile-update=single). */
int emit_count_stub(code_buf *b, uint64_t header_vaddr, uint64_t counters_slot,
                    mt_rewrite_header *h)
{
    h->count_stub = code_here(b) - header_vaddr;
    put1(b, ZYDIS_MNEMONIC_RET, ZYDIS_REGISTER_NONE);
    ZydisEncoderRequest r;
    request(&r, ZYDIS_MNEMONIC_MOV, 2);
    op_reg(&r.operands[0], ZYDIS_REGISTER_RCX);
    op_mem(&r.operands[1], ZYDIS_REGISTER_RIP, ZYDIS_REGISTER_NONE, 0,
           (int64_t)counters_slot, 8);
    put(b, &r);
    request(&r, ZYDIS_MNEMONIC_MOV, 2);
    op_reg(&r.operands[0], ZYDIS_REGISTER_RDX);
    op_mem(&r.operands[1], ZYDIS_REGISTER_RCX, ZYDIS_REGISTER_RAX, 8, 0, 8);
    put(b, &r);
    lea(b, ZYDIS_REGISTER_RDX, ZYDIS_REGISTER_RDX, 1);
    request(&r, ZYDIS_MNEMONIC_MOV, 2);
    op_mem(&r.operands[0], ZYDIS_REGISTER_RCX, ZYDIS_REGISTER_RAX, 8, 0, 8);
    op_reg(&r.operands[1], ZYDIS_REGISTER_RDX);
    put(b, &r);
    put1(b, ZYDIS_MNEMONIC_RET, ZYDIS_REGISTER_NONE);
    return b->failed ? -1 : 0;
}

/* A call through a register or memory, made to return to the original
 * next instruction (ret: insn's end):
 *   lea  -8(%rsp), %rsp          the return address' slot
 *   push %rax; lea ret(%rip), %rax; mov %rax, 8(%rsp); pop %rax
 *   push TARGET                  (the operand, rsp-based: + 8)
 *   ret                          jumps to it, the return address on top */
int emit_icall(code_buf *b, const x86_insn *insn)
{
    const ZydisDecodedOperand *t = &insn->zops[0];
    const x86_mem *m = NULL;
    for (unsigned i = 0; i < insn->nmem && !m; i++)
        if (insn->mem[i].implicit == X86_IMPL_NONE)
            m = &insn->mem[i];
    ZydisEncoderRequest r;
    lea(b, ZYDIS_REGISTER_RSP, ZYDIS_REGISTER_RSP, -8);
    put1(b, ZYDIS_MNEMONIC_PUSH, ZYDIS_REGISTER_RAX);
    lea(b, ZYDIS_REGISTER_RAX, ZYDIS_REGISTER_RIP,
        (int64_t)(insn->addr + insn->length));
    mov_store(b, ZYDIS_REGISTER_RSP, 8, ZYDIS_REGISTER_RAX, 8);
    put1(b, ZYDIS_MNEMONIC_POP, ZYDIS_REGISTER_RAX);
    request(&r, ZYDIS_MNEMONIC_PUSH, 1);
    if (t->type == ZYDIS_OPERAND_TYPE_REGISTER && t->size == 64 &&
        t->reg.value != ZYDIS_REGISTER_RSP) {
        op_reg(&r.operands[0], t->reg.value);
    } else if (t->type == ZYDIS_OPERAND_TYPE_MEMORY && m && m->size == 8 &&
               insn->zi.address_width == 64 &&
               m->segment != ZYDIS_REGISTER_GS) {
        op_original(&r.operands[0], m, 8, 8);
        if (m->segment == ZYDIS_REGISTER_FS)
            r.prefixes = ZYDIS_ATTRIB_HAS_SEGMENT_FS;
    } else {
        return b->failed = 1, -1;
    }
    put(b, &r);
    put1(b, ZYDIS_MNEMONIC_RET, ZYDIS_REGISTER_NONE);
    return b->failed ? -1 : 0;
}

static int rip_relative(const x86_insn *insn)
{
    for (uint8_t i = 0; i < insn->zi.operand_count; i++)
        if (insn->zops[i].type == ZYDIS_OPERAND_TYPE_MEMORY &&
            insn->zops[i].mem.base == ZYDIS_REGISTER_RIP)
            return 1;
    return 0;
}

int emit_relocated(code_buf *b, const x86_insn *insn, const uint8_t *bytes)
{
    if (b->failed || b->cap - b->len < insn->length) {
        b->failed = 1;
        return -1;
    }
    uint8_t *out = b->p + b->len;
    memcpy(out, bytes, insn->length);
    if (rip_relative(insn)) {
        /* the same bytes one place further: only the disp32 changes */
        const ZydisDecodedInstruction *zi = &insn->zi;
        if (zi->raw.disp.size != 32)
            return b->failed = 1, -1;
        uint64_t target = insn->addr + insn->length + (uint64_t)zi->raw.disp.value;
        int64_t rel = (int64_t)(target - (code_here(b) + insn->length));
        if (rel != (int32_t)rel)
            return b->failed = 1, -1;
        int32_t d = (int32_t)rel;
        memcpy(out + zi->raw.disp.offset, &d, 4);
    }
    b->len += insn->length;
    return 0;
}

void encode_patch_jump(uint8_t out[5], uint64_t from, uint64_t to)
{
    int32_t rel = (int32_t)(int64_t)(to - (from + 5));
    out[0] = 0xe9;
    memcpy(out + 1, &rel, 4);
}
