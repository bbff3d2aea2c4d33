/*
 * x86/emit.c - encodes the rewriter's code with Zydis's encoder.  Every
 * instruction emitted on the logging path leaves the flags alone (lea,
 * mov, push, pop, call, ret, jrcxz), so no site needs to save them; the
 * stub's slow path, which calls C, saves everything.
 *
 * One file: the stubs, the log sequence and the relocated instructions
 * are all encoded through the same few request helpers, kept static here.
 */
#include "x86/emit.h"
#include "x86/zydis.h"

#include <string.h>

#define RED_ZONE 128

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

/* m reg, [base + disp] (rip-based: disp is the absolute target) */
static void reg_mem(code_buf *b, ZydisMnemonic m, ZydisRegister reg,
                    ZydisRegister base, int64_t disp, uint16_t size)
{
    ZydisEncoderRequest r;
    request(&r, m, 2);
    op_reg(&r.operands[0], reg);
    op_mem(&r.operands[1], base, ZYDIS_REGISTER_NONE, 0, disp, size);
    put(b, &r);
}

/* lea reg, [base + disp] */
static void lea(code_buf *b, ZydisRegister reg, ZydisRegister base,
                int64_t disp)
{
    reg_mem(b, ZYDIS_MNEMONIC_LEA, reg, base, disp, 8);
}

/* mov between reg and %fs:disp(base) */
static void mov_fs(code_buf *b, ZydisRegister reg, int to_fs,
                   ZydisRegister base, int64_t disp)
{
    ZydisEncoderRequest r;
    request(&r, ZYDIS_MNEMONIC_MOV, 2);
    r.prefixes = ZYDIS_ATTRIB_HAS_SEGMENT_FS;
    op_reg(&r.operands[to_fs ? 1 : 0], reg);
    op_mem(&r.operands[to_fs ? 0 : 1], base, ZYDIS_REGISTER_NONE, 0, disp, 8);
    put(b, &r);
}

/* mov slot(%rip), reg: the slot at link-time address `slot` */
static void load_slot(code_buf *b, ZydisRegister reg, uint64_t slot,
                      uint16_t size)
{
    reg_mem(b, ZYDIS_MNEMONIC_MOV, reg, ZYDIS_REGISTER_RIP, (int64_t)slot,
            size);
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
    ZydisDecodedInstruction zi;
    ZydisDecodedOperand zops[ZYDIS_MAX_OPERAND_COUNT];
    if (x86_zydis_decode(insn, &zi, zops) != 0 ||
        !ZYAN_SUCCESS(ZydisEncoderDecodedInstructionToEncoderRequest(
            &zi, zops, zi.operand_count_visible, &r)))
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

/* A short forward branch whose rel8 land() fills in; returns its offset. */
static size_t jump8(code_buf *b, ZydisMnemonic m)
{
    ZydisEncoderRequest r;
    request(&r, m, 1);
    r.branch_width = ZYDIS_BRANCH_WIDTH_8;
    op_imm(&r.operands[0], (int64_t)(code_here(b) + 2));
    put(b, &r);
    return b->len - 2;
}

/* Points the jump8() at `at` here. */
static void land(code_buf *b, size_t at)
{
    int64_t rel = (int64_t)b->len - (int64_t)(at + 2);
    if (b->failed || rel > 127)
        b->failed = 1;
    else
        b->p[at + 1] = (uint8_t)rel;
}

static const ZydisRegister saved_by_flush[] = {
    ZYDIS_REGISTER_RAX, ZYDIS_REGISTER_RCX, ZYDIS_REGISTER_RDX,
    ZYDIS_REGISTER_RSI, ZYDIS_REGISTER_RDI, ZYDIS_REGISTER_R8,
    ZYDIS_REGISTER_R9,  ZYDIS_REGISTER_R10, ZYDIS_REGISTER_R11,
    ZYDIS_REGISTER_RBX,
};
#define NSAVED (sizeof saved_by_flush / sizeof *saved_by_flush)

/* The flush stub: saves the flags and the registers C may change, calls
 * the flush function (which moves to memtap's own stack and saves the
 * extended state there: a goroutine's stack has no room for it), restores
 * them and returns.
 *
 *   stub:  pushfq; push rax, rcx, rdx, rsi, rdi, r8-r11, rbx
 *          mov %rsp, %rbx; and $-16, %rsp
 *          call *flush(%rip)
 *          mov %rbx, %rsp; pop them; popfq; ret
 */
int emit_stub(code_buf *b, uint64_t header_vaddr, uint64_t flush_slot,
              mt_rewrite_header *h)
{
    h->stub = code_here(b) - header_vaddr;
    ZydisEncoderRequest r;
    put1(b, ZYDIS_MNEMONIC_PUSHFQ, ZYDIS_REGISTER_NONE);
    for (size_t i = 0; i < NSAVED; i++)
        put1(b, ZYDIS_MNEMONIC_PUSH, saved_by_flush[i]);
    request(&r, ZYDIS_MNEMONIC_MOV, 2); /* mov %rsp, %rbx */
    op_reg(&r.operands[0], ZYDIS_REGISTER_RBX);
    op_reg(&r.operands[1], ZYDIS_REGISTER_RSP);
    put(b, &r);
    request(&r, ZYDIS_MNEMONIC_AND, 2); /* and $-16, %rsp */
    op_reg(&r.operands[0], ZYDIS_REGISTER_RSP);
    op_imm(&r.operands[1], -16);
    put(b, &r);
    request(&r, ZYDIS_MNEMONIC_CALL, 1); /* call *flush_slot(%rip) */
    op_mem(&r.operands[0], ZYDIS_REGISTER_RIP, ZYDIS_REGISTER_NONE, 0,
           (int64_t)flush_slot, 8);
    put(b, &r);
    h->stub_call_end = code_here(b) - header_vaddr;
    request(&r, ZYDIS_MNEMONIC_MOV, 2); /* mov %rbx, %rsp */
    op_reg(&r.operands[0], ZYDIS_REGISTER_RSP);
    op_reg(&r.operands[1], ZYDIS_REGISTER_RBX);
    put(b, &r);
    for (size_t i = NSAVED; i-- > 0;)
        put1(b, ZYDIS_MNEMONIC_POP, saved_by_flush[i]);
    put1(b, ZYDIS_MNEMONIC_POPFQ, ZYDIS_REGISTER_NONE);
    put1(b, ZYDIS_MNEMONIC_RET, ZYDIS_REGISTER_NONE);
    return b->failed ? -1 : 0;
}

/* The start stub (rt/abi.h): memtap's start, if the audit module gave
 * it, then the file's own initializer, its arguments kept. */
int emit_start_stub(code_buf *b, uint64_t header_vaddr, uint64_t start_slot,
                    uint64_t init, mt_rewrite_header *h)
{
    static const ZydisRegister args[] = {
        ZYDIS_REGISTER_RDI, ZYDIS_REGISTER_RSI, ZYDIS_REGISTER_RDX,
    };
    size_t at = b->len;
    h->start_stub = code_here(b) - header_vaddr;
    h->start_slot = start_slot - header_vaddr;
    lea(b, ZYDIS_REGISTER_RAX, ZYDIS_REGISTER_RIP, (int64_t)header_vaddr);
    reg_mem(b, ZYDIS_MNEMONIC_MOV, ZYDIS_REGISTER_RAX, ZYDIS_REGISTER_RAX,
            (int64_t)h->start_slot, 8);
    ZydisEncoderRequest r;
    request(&r, ZYDIS_MNEMONIC_TEST, 2);
    op_reg(&r.operands[0], ZYDIS_REGISTER_RAX);
    op_reg(&r.operands[1], ZYDIS_REGISTER_RAX);
    put(b, &r);
    size_t none = jump8(b, ZYDIS_MNEMONIC_JZ);
    /* the loader calls with rsp 8 past a multiple of 16: three pushes
     * align it for the call */
    for (size_t i = 0; i < 3; i++)
        put1(b, ZYDIS_MNEMONIC_PUSH, args[i]);
    put1(b, ZYDIS_MNEMONIC_CALL, ZYDIS_REGISTER_RAX);
    for (size_t i = 3; i-- > 0;)
        put1(b, ZYDIS_MNEMONIC_POP, args[i]);
    land(b, none);
    branch(b, ZYDIS_MNEMONIC_JMP, init);
    if (!b->failed && memcmp(b->p + at, MT_START_LEA, 3) != 0)
        b->failed = 1; /* the audit module would not know it */
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
    if (m->base == X86_REG_RSP)
        disp += moved;
    else if (m->base == X86_REG_RIP)
        disp = (int64_t)m->target; /* absolute: the encoder makes it rel */
    op_mem(o, widen(x86_reg_to_zydis(m->base)), widen(x86_reg_to_zydis(m->index)),
           m->scale, disp, size);
}

/* A rel32 or disp32 field of the log sequence: where it lies in the
 * template, where its instruction ends (what it is relative to) and what
 * it points at. */
enum { REF_CURSOR1, REF_CURSOR2, REF_CURSOR3, REF_TAG, REF_STUB, NREFS };
_Static_assert((int)NREFS == (int)LOG_REFS, "log_template's fields");

/* Notes the field of the instruction just encoded (rip-relative and call
 * operands end with theirs). */
static void note_field(const code_buf *b, log_template *t, int k)
{
    t->end[k] = b->len;
    t->at[k] = b->len - 4;
}

/* The log sequence from `again` on, encoded once at address 0 (its
 * rip-relative and call fields patched per site by emit_log):
 *
 * again:
 *   mov  CURSOR(%rip), %rcx    the cursor's TLS offset
 *   jrcxz done                 0: logging is off
 *   movzwl %fs:(%rcx), %ecx    the cursor's low 16 bits
 *   jrcxz full                 0: no room
 *   mov  CURSOR(%rip), %rcx
 *   mov  %fs:(%rcx), %rcx
 *   mov  %rdx, 8(%rcx)
 *   mov  TAG(%rip), %edx
 *   lea  site(%rdx), %edx      (disp32, whatever the site)
 *   mov  %edx, (%rcx)
 *   mov  CURSOR(%rip), %rdx
 *   lea  16(%rcx), %rcx
 *   mov  %rcx, %fs:(%rdx)
 *   jmp  done
 * full:
 *   lea -128(%rsp), %rsp; call stub; lea 128(%rsp), %rsp
 *   jmp  again
 * done:
 */
int log_template_init(log_template *t)
{
    _Static_assert(MT_BUFFER_ALIGN == 1u << 16, "movzwl tests 16 bits");
    /* far targets force the 32-bit forms the patching assumes */
    const int64_t far = 0x40000000;
    code_buf b = { t->bytes, 0, sizeof t->bytes, 0, 0 };
    mt_log_shape *sh = &t->shape;
    memset(sh, 0, sizeof *sh);
    ZydisEncoderRequest r;
#define STEP(insn) (sh->starts |= 1ull << (b.len & 63), insn)
    STEP(load_slot(&b, ZYDIS_REGISTER_RCX, far, 8));
    note_field(&b, t, REF_CURSOR1);
    size_t logging_off = STEP(jump8(&b, ZYDIS_MNEMONIC_JRCXZ));
    request(&r, ZYDIS_MNEMONIC_MOVZX, 2); /* movzwl %fs:(%rcx), %ecx */
    r.prefixes = ZYDIS_ATTRIB_HAS_SEGMENT_FS;
    op_reg(&r.operands[0], ZYDIS_REGISTER_ECX);
    op_mem(&r.operands[1], ZYDIS_REGISTER_RCX, ZYDIS_REGISTER_NONE, 0, 0, 2);
    STEP(put(&b, &r));
    size_t full = STEP(jump8(&b, ZYDIS_MNEMONIC_JRCXZ));
    STEP(load_slot(&b, ZYDIS_REGISTER_RCX, far, 8));
    note_field(&b, t, REF_CURSOR2);
    STEP(mov_fs(&b, ZYDIS_REGISTER_RCX, 0, ZYDIS_REGISTER_RCX, 0));
    STEP(mov_store(&b, ZYDIS_REGISTER_RCX, 8, ZYDIS_REGISTER_RDX, 8));
    sh->rdx_kept = (uint8_t)b.len;
    STEP(load_slot(&b, ZYDIS_REGISTER_EDX, far, 4));
    note_field(&b, t, REF_TAG);
    STEP(lea(&b, ZYDIS_REGISTER_EDX, ZYDIS_REGISTER_RDX, far));
    t->site_at = b.len - 4;
    STEP(mov_store(&b, ZYDIS_REGISTER_RCX, 0, ZYDIS_REGISTER_EDX, 4));
    STEP(load_slot(&b, ZYDIS_REGISTER_RDX, far, 8));
    note_field(&b, t, REF_CURSOR3);
    STEP(lea(&b, ZYDIS_REGISTER_RCX, ZYDIS_REGISTER_RCX, (int64_t)sizeof(mt_entry)));
    sh->bumped = (uint8_t)b.len;
    STEP(mov_fs(&b, ZYDIS_REGISTER_RCX, 1, ZYDIS_REGISTER_RDX, 0));
#undef STEP
    int described = b.len <= 64; /* the commit's end: starts holds them */
    size_t done = jump8(&b, ZYDIS_MNEMONIC_JMP);
    land(&b, full);
    sh->full = (uint8_t)b.len;
    lea(&b, ZYDIS_REGISTER_RSP, ZYDIS_REGISTER_RSP, -RED_ZONE);
    sh->full_call = (uint8_t)b.len;
    branch(&b, ZYDIS_MNEMONIC_CALL, (uint64_t)far);
    note_field(&b, t, REF_STUB);
    lea(&b, ZYDIS_REGISTER_RSP, ZYDIS_REGISTER_RSP, RED_ZONE);
    branch(&b, ZYDIS_MNEMONIC_JMP, 0);
    land(&b, logging_off);
    land(&b, done);
    t->len = b.len;
    if (b.failed || !described || b.len > MT_LOG_BYTES)
        return -1;
    /* the shape: the bytes with the fields each copy fills in zeroed */
    sh->len = (uint8_t)b.len;
    memcpy(sh->bytes, t->bytes, b.len);
    for (int k = 0; k < NREFS; k++)
        sh->fields[sh->nfields++] = (uint8_t)t->at[k];
    sh->fields[sh->nfields++] = (uint8_t)t->site_at;
    for (int k = 0; k < sh->nfields; k++)
        memset(sh->bytes + sh->fields[k], 0, 4);
    return 0;
}

/* Writes v into the 4-byte field at p; 0, or -1 when it does not fit. */
static int put_rel32(uint8_t *p, int64_t v)
{
    if (v != (int32_t)v)
        return -1;
    int32_t d = (int32_t)v;
    memcpy(p, &d, 4);
    return 0;
}

/*
 *   [lea -128(%rsp), %rsp; push the live ones of %rcx and %rdx]
 *   lea  EA, %rdx              (rsp-based: + what rsp moved)
 *   [mov %edx, %edx]                              for 32-bit addressing
 *   [mov %fs:0, %rcx; lea (%rdx,%rcx), %rdx]     for %fs: operands
 *   the template (log_template_init), its fields pointed at to's stub
 *   and slots
 *   [pop what was pushed; lea 128(%rsp), %rsp]
 */
int emit_log_addressable(const x86_mem *m)
{
    return m->segment != X86_REG_GS &&
           !(m->base == X86_REG_NONE && m->index == X86_REG_NONE &&
             m->disp != (int32_t)m->disp);
}

int emit_log(code_buf *b, const x86_insn *insn, const x86_mem *m,
             uint32_t site, const log_refs *to, unsigned live)
{
    if (!emit_log_addressable(m))
        return -1;
    unsigned saves = live & LOG_USES;
    int64_t moved = saves ? frame_enter(b, saves) : 0;
    ZydisEncoderRequest r;
    request(&r, ZYDIS_MNEMONIC_LEA, 2);
    op_reg(&r.operands[0], ZYDIS_REGISTER_RDX);
    op_original(&r.operands[1], m, moved, 8);
    put(b, &r);
    if (insn->addr32) {
        request(&r, ZYDIS_MNEMONIC_MOV, 2); /* mov %edx, %edx */
        op_reg(&r.operands[0], ZYDIS_REGISTER_EDX);
        op_reg(&r.operands[1], ZYDIS_REGISTER_EDX);
        put(b, &r);
    }
    if (m->segment == X86_REG_FS) {
        mov_fs(b, ZYDIS_REGISTER_RCX, 0, ZYDIS_REGISTER_NONE, 0);
        request(&r, ZYDIS_MNEMONIC_LEA, 2);
        op_reg(&r.operands[0], ZYDIS_REGISTER_RDX);
        op_mem(&r.operands[1], ZYDIS_REGISTER_RDX, ZYDIS_REGISTER_RCX, 1, 0, 8);
        put(b, &r);
    }
    const log_template *t = &to->seq;
    if (b->failed || b->cap - b->len < t->len)
        return b->failed = 1, -1;
    uint8_t *p = b->p + b->len;
    uint64_t at = code_here(b);
    memcpy(p, t->bytes, t->len);
    const uint64_t target[NREFS] = { to->cursor_slot, to->cursor_slot,
                                     to->cursor_slot, to->tag_slot, to->stub };
    for (int k = 0; k < NREFS; k++)
        if (put_rel32(p + t->at[k], (int64_t)(target[k] - (at + t->end[k]))))
            return b->failed = 1, -1;
    put_rel32(p + t->site_at, site);
    b->len += t->len;
    if (saves)
        frame_leave(b, saves);
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
    load_slot(b, ZYDIS_REGISTER_RCX, counters_slot, 8);
    ZydisEncoderRequest r;
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
/* The explicit memory operand of an indirect call, or NULL. */
static const x86_mem *icall_mem(const x86_insn *insn)
{
    for (unsigned i = 0; i < insn->nmem; i++)
        if (insn->mem[i].implicit == X86_IMPL_NONE)
            return &insn->mem[i];
    return NULL;
}

int emit_icall_encodable(const x86_insn *insn)
{
    const x86_operand *t = &insn->ops[0];
    const x86_mem *m = icall_mem(insn);
    return (t->type == X86_OPND_REG && t->size == 64 && t->reg != X86_REG_RSP) ||
           (t->type == X86_OPND_MEM && m && m->size == 8 && !insn->addr32 &&
            m->segment != X86_REG_GS);
}

int emit_icall(code_buf *b, const x86_insn *insn)
{
    const x86_operand *t = &insn->ops[0];
    const x86_mem *m = icall_mem(insn);
    if (!emit_icall_encodable(insn))
        return b->failed = 1, -1;
    ZydisEncoderRequest r;
    lea(b, ZYDIS_REGISTER_RSP, ZYDIS_REGISTER_RSP, -8);
    put1(b, ZYDIS_MNEMONIC_PUSH, ZYDIS_REGISTER_RAX);
    lea(b, ZYDIS_REGISTER_RAX, ZYDIS_REGISTER_RIP,
        (int64_t)(insn->addr + insn->length));
    mov_store(b, ZYDIS_REGISTER_RSP, 8, ZYDIS_REGISTER_RAX, 8);
    put1(b, ZYDIS_MNEMONIC_POP, ZYDIS_REGISTER_RAX);
    request(&r, ZYDIS_MNEMONIC_PUSH, 1);
    if (t->type == X86_OPND_REG) {
        op_reg(&r.operands[0], x86_reg_to_zydis(t->reg));
    } else {
        op_original(&r.operands[0], m, 8, 8);
        if (m->segment == X86_REG_FS)
            r.prefixes = ZYDIS_ATTRIB_HAS_SEGMENT_FS;
    }
    put(b, &r);
    put1(b, ZYDIS_MNEMONIC_RET, ZYDIS_REGISTER_NONE);
    return b->failed ? -1 : 0;
}

static int rip_relative(const x86_insn *insn)
{
    for (uint8_t i = 0; i < insn->nops; i++)
        if (insn->ops[i].type == X86_OPND_MEM && insn->ops[i].base == X86_REG_RIP)
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
        int32_t d;
        if (insn->disp_size != 32)
            return b->failed = 1, -1;
        memcpy(&d, bytes + insn->disp_at, 4);
        uint64_t target = insn->addr + insn->length + (uint64_t)(int64_t)d;
        int64_t rel = (int64_t)(target - (code_here(b) + insn->length));
        if (rel != (int32_t)rel)
            return b->failed = 1, -1;
        d = (int32_t)rel;
        memcpy(out + insn->disp_at, &d, 4);
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
