/*
 * reg.c - memtap's register names (x86_reg) against Zydis's, both ways, and
 * what the analyses ask of one: its general register and its width.
 */
#include "x86/zydis.h"

_Static_assert(ZYDIS_REGISTER_R15 - ZYDIS_REGISTER_RAX == 15, "rax .. r15");
_Static_assert(ZYDIS_REGISTER_R15D - ZYDIS_REGISTER_EAX == 15, "eax .. r15d");
_Static_assert(ZYDIS_REGISTER_R15W - ZYDIS_REGISTER_AX == 15, "ax .. r15w");
_Static_assert(ZYDIS_REGISTER_BL - ZYDIS_REGISTER_AL == 3, "al .. bl");
_Static_assert(ZYDIS_REGISTER_BH - ZYDIS_REGISTER_AH == 3, "ah .. bh");
_Static_assert(ZYDIS_REGISTER_DIL - ZYDIS_REGISTER_SPL == 3, "spl .. dil");
_Static_assert(ZYDIS_REGISTER_R15B - ZYDIS_REGISTER_R8B == 7, "r8b .. r15b");
_Static_assert(ZYDIS_REGISTER_GS - ZYDIS_REGISTER_ES == 5, "es cs ss ds fs gs");
_Static_assert(ZYDIS_REGISTER_MAX_VALUE < 0x100 * 8, "X86_RC_OTHER's numbers");

/* A class's Zydis registers: the first, how many, the number of the
 * first. */
static const struct {
    uint16_t rc;
    ZydisRegister first;
    uint8_t n, number;
} ranges[] = {
    { X86_RC_GPR64, ZYDIS_REGISTER_RAX, 16, 0 },
    { X86_RC_GPR32, ZYDIS_REGISTER_EAX, 16, 0 },
    { X86_RC_GPR16, ZYDIS_REGISTER_AX, 16, 0 },
    { X86_RC_GPR8, ZYDIS_REGISTER_AL, 4, 0 },
    { X86_RC_GPR8, ZYDIS_REGISTER_SPL, 4, 4 },
    { X86_RC_GPR8, ZYDIS_REGISTER_R8B, 8, 8 },
    { X86_RC_GPR8H, ZYDIS_REGISTER_AH, 4, 0 },
    { X86_RC_IP, ZYDIS_REGISTER_RIP, 1, 0 },
    { X86_RC_IP, ZYDIS_REGISTER_EIP, 1, 1 },
    { X86_RC_SEGMENT, ZYDIS_REGISTER_ES, 6, 0 },
};

/* Zydis's registers memtap names one by one; a register not here (0) is
 * X86_RC_OTHER.  A constant table: signal handlers decode too. */
#define AT(z, rc, n) [(z)] = (x86_reg)((rc) | (n))
#define SEQ4(z, rc, n) AT((z), rc, (n)), AT((z) + 1, rc, (n) + 1), \
                       AT((z) + 2, rc, (n) + 2), AT((z) + 3, rc, (n) + 3)
#define SEQ8(z, rc, n) SEQ4((z), rc, (n)), SEQ4((z) + 4, rc, (n) + 4)
#define SEQ16(z, rc, n) SEQ8((z), rc, (n)), SEQ8((z) + 8, rc, (n) + 8)
static const x86_reg named[ZYDIS_REGISTER_MAX_VALUE + 1] = {
    SEQ16(ZYDIS_REGISTER_RAX, X86_RC_GPR64, 0),
    SEQ16(ZYDIS_REGISTER_EAX, X86_RC_GPR32, 0),
    SEQ16(ZYDIS_REGISTER_AX, X86_RC_GPR16, 0),
    SEQ4(ZYDIS_REGISTER_AL, X86_RC_GPR8, 0),
    SEQ4(ZYDIS_REGISTER_SPL, X86_RC_GPR8, 4),
    SEQ8(ZYDIS_REGISTER_R8B, X86_RC_GPR8, 8),
    SEQ4(ZYDIS_REGISTER_AH, X86_RC_GPR8H, 0),
    AT(ZYDIS_REGISTER_RIP, X86_RC_IP, 0),
    AT(ZYDIS_REGISTER_EIP, X86_RC_IP, 1),
    SEQ4(ZYDIS_REGISTER_ES, X86_RC_SEGMENT, 0),
    AT(ZYDIS_REGISTER_FS, X86_RC_SEGMENT, 4),
    AT(ZYDIS_REGISTER_GS, X86_RC_SEGMENT, 5),
};
#undef SEQ16
#undef SEQ8
#undef SEQ4
#undef AT

x86_reg x86_reg_from_zydis(ZydisRegister r)
{
    if (r == ZYDIS_REGISTER_NONE || (unsigned)r > ZYDIS_REGISTER_MAX_VALUE)
        return X86_REG_NONE;
    return named[r] ? named[r] : (x86_reg)(X86_RC_OTHER | r);
}

ZydisRegister x86_reg_to_zydis(x86_reg r)
{
    if (r == X86_REG_NONE)
        return ZYDIS_REGISTER_NONE;
    unsigned rc = r & 0xff00u, number = r & 0xffu;
    if (rc >= X86_RC_OTHER)
        return (ZydisRegister)(r - X86_RC_OTHER);
    for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++)
        if (ranges[i].rc == rc && number >= ranges[i].number &&
            number < ranges[i].number + ranges[i].n)
            return (ZydisRegister)(ranges[i].first + (number - ranges[i].number));
    return ZYDIS_REGISTER_NONE;
}

int x86_gpr_index(x86_reg r)
{
    switch (r & 0xff00u) {
    case X86_RC_GPR64: case X86_RC_GPR32: case X86_RC_GPR16:
    case X86_RC_GPR8: case X86_RC_GPR8H:
        return r & 0xff;
    case X86_RC_IP:
        return 16;
    default:
        return -1;
    }
}

unsigned x86_reg_width(x86_reg r)
{
    switch (r & 0xff00u) {
    case X86_RC_GPR64: return 64;
    case X86_RC_GPR32: return 32;
    case X86_RC_GPR16: return 16;
    case X86_RC_GPR8: case X86_RC_GPR8H: return 8;
    case X86_RC_IP: return r == X86_REG_RIP ? 64 : 32;
    default: return 0;
    }
}
