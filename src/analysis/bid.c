/*
 * bid.c - BID expressions from x86 memory operands, equality, distance.
 */
#include "analysis/bid.h"

#include <elf.h>
#include <stdio.h>
#include <string.h>

static bid_reg reg_of(x86_reg r, uint8_t scale,
                      const uint16_t inc[BID_NREGS])
{
    bid_reg out = {0, 0, 0};
    int g = x86_gpr_index(r);
    if (g < 0 || g >= BID_NREGS)
        return out;
    out.id = (uint8_t)(g + 1);
    if (x86_reg_width(r) == 32)
        out.id |= BID_REG32;
    out.scale = scale ? scale : 1;
    out.inc = inc[g];
    return out;
}

int bid_from_mem(const x86_mem *m, const uint16_t inc[BID_NREGS],
                 const code_image *img, bid_expr *e)
{
    memset(e, 0, sizeof *e);
    int has_base = m->base != X86_REG_NONE;
    int has_index = m->index != X86_REG_NONE;
    if (m->segment != X86_REG_NONE) {
        /* Thread-local data: the segment base is the (stable) base
         * register, the address register becomes the index. */
        if (has_base && has_index)
            return -1;
        e->tmpl = BID_RRI;
        e->r1.id = m->segment == X86_REG_FS ? BID_FS : BID_GS;
        e->r1.scale = 1;
        e->r2 = has_base ? reg_of(m->base, 1, inc) : reg_of(m->index, m->scale, inc);
        e->imm = m->disp;
        return 0;
    }
    if (m->base == X86_REG_RIP || m->base == X86_REG_EIP) {
        e->tmpl = BID_IRR;
        e->imm = (int64_t)m->target;
        return 0;
    }
    int static_disp = img && img->type == ET_EXEC && m->disp > 0 &&
                      image_is_static_data(img, (uint64_t)m->disp);
    if (!has_base || static_disp) {
        e->tmpl = BID_IRR;
        e->imm = m->disp;
        if (has_index) {
            e->r1 = reg_of(m->index, m->scale, inc);
            if (has_base)
                e->r2 = reg_of(m->base, 1, inc);
        } else if (has_base) {
            e->r1 = reg_of(m->base, 1, inc);
        }
        return 0;
    }
    e->tmpl = BID_RRI;
    e->r1 = reg_of(m->base, 1, inc);
    if (has_index)
        e->r2 = reg_of(m->index, m->scale, inc);
    e->imm = m->disp;
    return 0;
}

static int reg_eq(bid_reg a, bid_reg b)
{
    return a.id == b.id && a.scale == b.scale && a.inc == b.inc;
}

int bid_equal(const bid_expr *a, const bid_expr *b)
{
    return a->tmpl == b->tmpl && a->imm == b->imm && reg_eq(a->r1, b->r1) &&
           reg_eq(a->r2, b->r2);
}

static uint64_t absdiff(int64_t a, int64_t b)
{
    return a > b ? (uint64_t)a - (uint64_t)b : (uint64_t)b - (uint64_t)a;
}

unsigned bid_distance(const bid_expr *a, const bid_expr *b,
                      const bid_scores *s, uint64_t chunk)
{
    if (a->tmpl == BID_RRI) {
        /* triplet <s_b, s_i, s_d> = <s2, s1, s3> */
        int same_b = reg_eq(a->r1, b->r1), same_i = reg_eq(a->r2, b->r2);
        if (same_b && same_i)
            return absdiff(a->imm, b->imm) >= chunk ? s->s3 : 0;
        if (same_b)
            return s->s1;
        return same_i ? s->s2 : s->s1 + s->s2;
    }
    /* IRR: triplet <s_b, s_i, s_d> = <s3, s2, s1> */
    if (absdiff(a->imm, b->imm) >= chunk)
        return s->s3;
    int same_i = reg_eq(a->r1, b->r1), same_d = reg_eq(a->r2, b->r2);
    if (same_i)
        return same_d ? 0 : s->s1;
    return same_d ? s->s2 : s->s1 + s->s2;
}

int bid_scores_valid(const bid_scores *s)
{
    return s->s1 < s->s2 && s->s2 < s->s3 && s->s1 + s->s2 < s->s3;
}

static const char *const gpr_names[] = {
    "rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
    "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "fs", "gs"};
static const char *const gpr32_names[] = {
    "eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi",
    "r8d", "r9d", "r10d", "r11d", "r12d", "r13d", "r14d", "r15d"};

static int fmt_reg(char *buf, unsigned cap, bid_reg r)
{
    if (!r.id)
        return snprintf(buf, cap, "nil");
    unsigned id = (r.id & ~BID_REG32) - 1u;
    const char *name = (r.id & BID_REG32) ? (id < 16 ? gpr32_names[id] : "?")
                                          : (id < 18 ? gpr_names[id] : "?");
    char scale[8] = "";
    if (r.scale > 1)
        snprintf(scale, sizeof scale, "*%u", r.scale);
    return snprintf(buf, cap, "%%%s%s.%u", name, scale, r.inc);
}

void bid_format(const bid_expr *e, char *buf, unsigned cap)
{
    char r1[32], r2[32], imm[24];
    fmt_reg(r1, sizeof r1, e->r1);
    fmt_reg(r2, sizeof r2, e->r2);
    if (e->imm < 0)
        snprintf(imm, sizeof imm, "-0x%llx", (unsigned long long)-(uint64_t)e->imm);
    else
        snprintf(imm, sizeof imm, "0x%llx", (unsigned long long)e->imm);
    if (e->tmpl == BID_RRI)
        snprintf(buf, cap, "RRI{%s, %s, %s}", r1, r2, imm);
    else
        snprintf(buf, cap, "IRR{%s, %s, %s}", imm, r1, r2);
}
