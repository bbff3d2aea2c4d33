/*
 * test_x86.c - the x86 seam against Zydis itself: memtap's register names
 * both ways for every register Zydis knows, and what x86_decode, x86_scan
 * and x86_access say of instructions whose bytes and meaning are written
 * here by hand.
 */
#define _GNU_SOURCE
#include "check.h"
#include "x86/access.h"
#include "x86/context.h"
#include "x86/zydis.h"

#include <string.h>
#include <ucontext.h>

/* Every register: the name survives the round trip, and its general
 * register and width are Zydis's. */
static void test_registers(void)
{
    for (int r = 0; r <= ZYDIS_REGISTER_MAX_VALUE; r++) {
        ZydisRegister z = (ZydisRegister)r;
        x86_reg m = x86_reg_from_zydis(z);
        CHECK_EQ_U64(x86_reg_to_zydis(m), z);
        ZydisRegister big = ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, z);
        int want = z == ZYDIS_REGISTER_RIP || z == ZYDIS_REGISTER_EIP ? 16
                   : big >= ZYDIS_REGISTER_RAX && big <= ZYDIS_REGISTER_R15
                       ? (int)(big - ZYDIS_REGISTER_RAX) : -1;
        CHECK_EQ_U64((uint64_t)(int64_t)x86_gpr_index(m), (uint64_t)(int64_t)want);
        if (want >= 0)
            CHECK_EQ_U64(x86_reg_width(m), ZydisRegisterGetWidth(ZYDIS_MACHINE_MODE_LONG_64, z));
        for (int s = 0; s < r; s += 7) /* distinct registers stay distinct */
            CHECK(x86_reg_from_zydis((ZydisRegister)s) != m);
    }
    CHECK_EQ_U64(x86_reg_from_zydis(ZYDIS_REGISTER_RSP), X86_REG_RSP);
    CHECK_EQ_U64(x86_reg_from_zydis(ZYDIS_REGISTER_FS), X86_REG_FS);
    CHECK_EQ_U64(x86_reg_from_zydis(ZYDIS_REGISTER_EIP), X86_REG_EIP);
}

static const uint8_t lea_rip[] = { 0x48, 0x8d, 0x05, 0x10, 0x00, 0x00, 0x00 }; /* lea 0x10(%rip),%rax */
static const uint8_t add_regs[] = { 0x48, 0x01, 0xc3 };                     /* add %rax,%rbx */
static const uint8_t jcc8[] = { 0x77, 0x05 };                               /* ja .+7 */
static const uint8_t rep_movsb[] = { 0xf3, 0xa4 };
static const uint8_t sse_movsd[] = { 0xf2, 0x0f, 0x10, 0x00 };              /* movsd (%rax),%xmm0 */
static const uint8_t load[] = { 0x8b, 0x54, 0x88, 0x08 };                   /* mov 8(%rax,%rcx,4),%edx */
static const uint8_t rep_stosq[] = { 0xf3, 0x48, 0xab };
static const uint8_t div_mem[] = { 0xf7, 0x30 };                            /* div (%rax) */
static const uint8_t push_rax[] = { 0x50 };

static void test_decode(void)
{
    x86_decoder d;
    x86_insn x;
    CHECK(x86_decoder_init(&d) == 0);

    CHECK(x86_decode(&d, lea_rip, sizeof lea_rip, 0x1000, &x) == 0);
    CHECK_EQ_U64(x.op, X86_OP_LEA);
    CHECK_EQ_U64(x.length, 7);
    CHECK_EQ_U64(x.nmem, 0); /* an address, no access */
    CHECK_EQ_U64(x.ops[1].type, X86_OPND_MEM);
    CHECK_EQ_U64(x.ops[1].base, X86_REG_RIP);
    CHECK_EQ_U64(x.ops[1].target, 0x1000 + 7 + 0x10);
    CHECK_EQ_U64(x.disp_at, 3);
    CHECK_EQ_U64(x.disp_size, 32);
    CHECK_EQ_U64(x.writes, 1u << 0);

    CHECK(x86_decode(&d, add_regs, sizeof add_regs, 0, &x) == 0);
    CHECK_EQ_U64(x.op, X86_OP_ADD);
    CHECK_EQ_U64(x86_visible(&x, 0)->reg, X86_RC_GPR64 | 3);
    CHECK_EQ_U64(x86_visible(&x, 1)->reg, X86_REG_RAX);
    CHECK(x86_visible(&x, 2) == NULL);
    uint32_t use, kill;
    x86_gpr_use_kill(&x, &use, &kill);
    CHECK_EQ_U64(use, 1u << 0 | 1u << 3); /* rbx is read and written */
    CHECK_EQ_U64(kill, 0);

    CHECK(x86_decode_flow(&d, jcc8, sizeof jcc8, 0x2000, &x) == 0);
    CHECK_EQ_U64(x.flow, X86_FLOW_JCC);
    CHECK_EQ_U64(x.op, X86_OP_JNBE);
    CHECK_EQ_U64(x.target, 0x2007);
    CHECK_EQ_U64(x.branch_at, 1);
    CHECK_EQ_U64(x.branch_size, 8);

    CHECK(x86_decode(&d, rep_movsb, sizeof rep_movsb, 0, &x) == 0);
    CHECK_EQ_U64(x.op, X86_OP_MOVS);
    CHECK_EQ_U64(x.rep, X86_REP_E);
    CHECK(x86_decode(&d, sse_movsd, sizeof sse_movsd, 0, &x) == 0);
    CHECK_EQ_U64(x.op, X86_OP_OTHER); /* the SSE move, not the string one */

    char text[64];
    CHECK(x86_decode(&d, push_rax, sizeof push_rax, 0, &x) == 0);
    x86_format(&x, text, sizeof text);
    CHECK_STREQ(text, "push %rax");
    CHECK_EQ_U64(x.mem[0].disp, (uint64_t)-8); /* the slot below rsp */
    CHECK(x.mem[0].stack);
}

/* x86_scan reads what x86_decode reads. */
static void test_scan(void)
{
    x86_decoder d;
    x86_scanned s;
    CHECK(x86_decoder_init(&d) == 0);
    CHECK(x86_scan(&d, lea_rip, sizeof lea_rip, 0x1000, X86_SCAN_MINIMAL, &s) == 0);
    CHECK_EQ_U64(s.rip, 0x1017);
    CHECK_EQ_U64(s.op, X86_OP_LEA);
    CHECK(x86_scan(&d, lea_rip, sizeof lea_rip, 0x1000, X86_SCAN_MEMORY, &s) == 0);
    CHECK_EQ_U64(s.memory, 0);
    CHECK(x86_scan(&d, load, sizeof load, 0, X86_SCAN_MEMORY, &s) == 0);
    CHECK_EQ_U64(s.memory, 1);
    CHECK_EQ_U64(s.rip, 0);
    CHECK(x86_scan(&d, jcc8, sizeof jcc8, 0x2000, X86_SCAN_MINIMAL, &s) == 0);
    CHECK(s.branch);
    CHECK_EQ_U64(s.target, 0x2007);
    CHECK_EQ_U64(s.flow, X86_FLOW_JCC);
}

/* The fault engine's view, against registers set by hand. */
static void test_access(void)
{
    x86_decoder d;
    x86_access_insn x;
    x86_access a;
    ucontext_t uc;
    memset(&uc, 0, sizeof uc);
    uc.uc_mcontext.gregs[REG_RAX] = 0x10000;
    uc.uc_mcontext.gregs[REG_RCX] = 3;
    CHECK(x86_decoder_init(&d) == 0);

    CHECK(x86_access_decode(&d, load, sizeof load, &x) == 0);
    CHECK_EQ_U64(x86_access_length(&x), 4);
    int mem = x86_access_completable(&x, 64);
    CHECK_EQ_U64(mem, 1);
    CHECK(x86_access_operand(&x, &uc, (unsigned)mem, 0, &a));
    CHECK_EQ_U64(a.addr, 0x10000 + 3 * 4 + 8);
    CHECK_EQ_U64(a.size, 4);
    CHECK(a.read && !a.write && !a.overwrites && !a.through_rsp);
    CHECK(!x86_access_operand(&x, &uc, 0, 0, &a)); /* edx: no access */
    CHECK(x86_access_integer_only(&x));
    uint8_t code[X86_MAX_LENGTH];
    size_t n = 0;
    int s = x86_access_encode_through(&x, mem, code, &n);
    CHECK(s == 11 && n > 0); /* r11, the first not named: mov (%r11),%edx */

    unsigned elem = 0;
    CHECK(x86_access_decode(&d, rep_stosq, sizeof rep_stosq, &x) == 0);
    CHECK_EQ_U64(x86_access_rep_string(&x, &elem), X86_OP_STOS);
    CHECK_EQ_U64(elem, 8);
    CHECK(x86_access_repeats(&x));
    CHECK_EQ_U64((uint64_t)(int64_t)x86_access_completable(&x, 64), (uint64_t)-1);

    CHECK(x86_access_decode(&d, div_mem, sizeof div_mem, &x) == 0);
    CHECK_EQ_U64((uint64_t)(int64_t)x86_access_completable(&x, 64), (uint64_t)-1);
    CHECK(!x86_access_indirect_branch(&x));
}

int main(void)
{
    test_registers();
    test_decode();
    test_scan();
    test_access();
    return CHECK_DONE();
}
