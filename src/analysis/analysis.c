/*
 * analysis.c - drives the static analysis over every block of a file:
 * decoding, stability analysis (a new incarnation of a register at every
 * write, explicit or implicit), BID expressions, classification of the
 * accesses that have none, the per-block selection, and the totals.
 */
#include "analysis/analysis.h"

#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sys/vec.h"

/* The first `max` instructions of block b, in order, to fn. */
static int first_insns(const analysis *a, const cfg_block *b, uint32_t max,
                       void (*fn)(const x86_insn *insn, void *arg), void *arg)
{
    x86_decoder dec;
    x86_insn x;
    if (x86_decoder_init(&dec))
        return -1;
    for (uint32_t k = 0; k < b->ninsn && k < max; k++) {
        uint64_t addr = a->cfg->insn_addr[b->first_insn + k];
        size_t avail;
        const uint8_t *code = image_code(a->img, addr, &avail);
        if (!code || x86_decode(&dec, code, avail, addr, &x))
            return -1;
        fn(&x, arg);
    }
    return 0;
}

int analysis_block_insns(const analysis *a, const cfg_block *b,
                         void (*fn)(const x86_insn *insn, void *arg), void *arg)
{
    return first_insns(a, b, UINT32_MAX, fn, arg);
}

/* ---- frame pointers ----
 * Where in a function rbp holds its frame's address, an address of the
 * stack: from the instruction after the entry block's `mov %rsp, %rbp`
 * on, when nothing else in the function writes rbp but a `pop %rbp` or
 * `leave` followed at once by a return or a jump out (no operand of the
 * function sees the caller's rbp after it), and the function has no other
 * entry and no code found only by scanning. */

#define NO_FRAME UINT64_MAX

typedef struct frame_scan {
    uint64_t from;           /* after the prologue's mov; NO_FRAME */
    int entry_block;         /* scanning the function's entry block */
    int leaving;             /* the last instruction was pop %rbp/leave */
    int bad;
} frame_scan;

static int is_reg(const x86_operand *o, x86_reg r)
{
    return o->type == X86_OPND_REG && o->reg == r;
}

static int sets_frame(const x86_insn *x)
{
    return x->op == X86_OP_MOV && is_reg(&x->ops[0], X86_REG_RBP) &&
           is_reg(&x->ops[1], X86_REG_RSP);
}

static void find_frame_setup(const x86_insn *x, void *arg)
{
    *(int *)arg |= sets_frame(x);
}

static void scan_frame(const x86_insn *x, void *arg)
{
    frame_scan *f = arg;
    if (f->leaving && x->flow != X86_FLOW_RET && x->flow != X86_FLOW_JUMP &&
        x->flow != X86_FLOW_IJUMP)
        f->bad = 1;
    f->leaving = 0;
    if (!(x->writes & (1u << x86_gpr_index(X86_REG_RBP))))
        return;
    if (sets_frame(x) && f->entry_block && f->from == NO_FRAME)
        f->from = x->addr + x->length;
    else if (x->op == X86_OP_LEAVE ||
             (x->op == X86_OP_POP && is_reg(&x->ops[0], X86_REG_RBP)))
        f->leaving = 1;
    else
        f->bad = 1;
}

/* Where rbp is the frame pointer in function fi (NO_FRAME: nowhere).
 * Only functions whose first instructions (endbr64, push %rbp) set it up
 * are scanned whole. */
static uint64_t frame_from(const analysis *a, uint32_t fi)
{
    const cfg_func *fn = &a->cfg->funcs[fi];
    frame_scan f = { NO_FRAME, 0, 0, 0 };
    int prologue = 0;
    if (!fn->nblocks ||
        first_insns(a, &a->cfg->blocks[fn->first_block], 4, find_frame_setup,
                    &prologue) || !prologue)
        return NO_FRAME;
    for (uint32_t i = 0; i < fn->nblocks && !f.bad; i++) {
        const cfg_block *b = &a->cfg->blocks[fn->first_block + i];
        f.entry_block = i == 0 && (b->flags & CFG_BLOCK_ENTRY);
        if ((i && (b->flags & CFG_BLOCK_ENTRY)) || (b->flags & (CFG_BLOCK_GAP | CFG_BLOCK_DATA)) ||
            b->func != fi || analysis_block_insns(a, b, scan_frame, &f) ||
            f.leaving)
            f.bad = 1;
    }
    return f.bad ? NO_FRAME : f.from;
}

typedef struct block_walk {
    const code_image *img;
    int implicit;            /* select_params.implicit */
    uint64_t frame_from;     /* rbp-based operands from here on: stack */
    vec *exprs;
    analysis_counts *c;
    uint16_t inc[BID_NREGS];
    int oom;
} block_walk;

static void count_other(analysis_counts *c, const x86_mem *m)
{
    if (m->kind == X86_MEM_HINT)
        c->hints++;
    else if (m->kind == X86_MEM_VSIB)
        c->vsib++;
    else if (m->kind == X86_MEM_OTHER)
        c->unsupported++;
    else if (m->implicit == X86_IMPL_STACK)
        c->implicit_stack++;
    else if (m->implicit == X86_IMPL_STRING)
        c->implicit_string++;
    else
        c->implicit_other++;
}

int analysis_models(const x86_mem *m, int implicit)
{
    return m->kind == X86_MEM_ACCESS &&
           (m->implicit == X86_IMPL_NONE ||
            (implicit && m->implicit == X86_IMPL_STACK));
}

/* One instruction: its modelled accesses become expressions with the
 * incarnations current before it executes; then its writes take effect. */
static void walk_insn(const x86_insn *x, void *arg)
{
    block_walk *w = arg;
    analysis_counts *c = w->c;
    int explicit_here = 0;
    c->insns++;
    c->avx512 += x->avx512;
    for (unsigned i = 0; i < x->nmem; i++) {
        const x86_mem *m = &x->mem[i];
        bid_expr e;
        if (m->kind != X86_MEM_ACCESS || m->implicit != X86_IMPL_NONE)
            count_other(c, m); /* implicit ones even when modelled */
        if (!analysis_models(m, w->implicit))
            continue;
        if (bid_from_mem(m, w->inc, w->img, &e)) {
            c->unsupported++;
            continue;
        }
        sel_expr *s = vec_push(w->exprs);
        if (!s) {
            w->oom = 1;
            return;
        }
        s->addr = x->addr;
        s->e = e;
        s->size = m->size;
        s->read = m->read;
        s->write = m->write;
        s->stack = m->stack || (m->base == X86_REG_RBP &&
                                m->segment == X86_REG_NONE &&
                                x->addr >= w->frame_from);
        s->implicit = m->implicit != X86_IMPL_NONE;
        if (m->segment == X86_REG_NONE && m->base == X86_REG_RIP) {
            s->fixed = 1;
            s->target = m->target;
        } else if (m->segment == X86_REG_NONE && m->base == X86_REG_NONE &&
                   m->index == X86_REG_NONE && w->img->type == ET_EXEC) {
            s->fixed = 1;
            s->target = (uint64_t)m->disp;
        }
        explicit_here |= !s->implicit;
        if (s->implicit)
            continue;
        c->explicit_reads += m->read;
        c->explicit_writes += m->write;
        c->explicit_stack += s->stack;
    }
    c->mem_insns += explicit_here;
    for (int g = 0; g < BID_NREGS; g++)
        if (x->writes & (1u << g))
            w->inc[g]++;
}

#define COUNT_FIELDS(X)                                                     \
    X(insns) X(blocks) X(mem_insns) X(n) X(m) X(W) X(selected) X(ma_num)    \
    X(aia_num) X(blocks_with_mem) X(block_ma_sum) X(block_aia_sum)          \
    X(explicit_reads) X(explicit_writes) X(explicit_stack)                  \
    X(implicit_stack) X(implicit_string) X(implicit_other) X(vsib) X(hints) \
    X(unsupported) X(avx512) X(bypass[0]) X(bypass[1]) X(bypass[2])         \
    X(bypass[3]) X(bypass[4])

static void add_counts(analysis_counts *to, const analysis_counts *from)
{
#define ADD(f) to->f += from->f;
    COUNT_FIELDS(ADD)
#undef ADD
}

static int in_ranges(const select_range *r, unsigned n, uint64_t addr)
{
    for (unsigned i = 0; i < n; i++)
        if (addr >= r[i].lo && addr < r[i].hi)
            return 1;
    return 0;
}

/* The bypass rule that leaves the operand uninstrumented (its index in
 * analysis_counts.bypass: stack, static, read-only, tested loads,
 * ignored), or -1. */
static int bypass_rule(const analysis *a, const sel_expr *x)
{
    const select_params *p = &a->params;
    unsigned rules = p->bypass;
    if ((rules & BYPASS_LOADS) && x->read && !x->write &&
        (!p->ntested || in_ranges(p->tested, p->ntested, x->addr)))
        return 3;
    if ((rules & BYPASS_STACK) && x->stack)
        return 0;
    if (!x->fixed)
        return -1;
    if ((rules & BYPASS_IGNORED) && in_ranges(p->ignore, p->nignore, x->target))
        return 4;
    image_memory mem = image_memory_at(a->img, x->target);
    if ((rules & BYPASS_STATIC) && mem == IMAGE_MEM_WRITABLE)
        return 1;
    if ((rules & BYPASS_READ_ONLY) && mem == IMAGE_MEM_READ_ONLY)
        return 2;
    return -1;
}

/* Unselects the operands a bypass rule covers, counting them per rule. */
static void apply_bypass(const analysis *a, sel_expr *x, uint32_t n,
                         sel_block *sel, analysis_counts *c)
{
    for (uint32_t i = 0; i < n && a->params.bypass; i++) {
        int rule = x[i].selected ? bypass_rule(a, &x[i]) : -1;
        if (rule < 0)
            continue;
        x[i].selected = 0;
        sel->selected--;
        c->bypass[rule]++;
    }
}

static int analyse_block(analysis *a, size_t bi, uint64_t frame,
                         vec *exprs)
{
    const cfg_block *b = &a->cfg->blocks[bi];
    analysis_block *ab = &a->blocks[bi];
    analysis_counts c = {0};
    block_walk w = {.img = a->img, .implicit = a->params.implicit,
                    .frame_from = frame, .exprs = exprs, .c = &c};
    ab->first_expr = (uint32_t)exprs->n;
    if (analysis_block_insns(a, b, walk_insn, &w) || w.oom)
        return -1;
    uint32_t n = (uint32_t)(exprs->n - ab->first_expr);
    sel_expr *x = (sel_expr *)exprs->v + ab->first_expr;
    if (select_block(x, n, &a->params, &ab->sel))
        return -1;
    apply_bypass(a, x, n, &ab->sel, &c);
    c.blocks = 1;
    c.n = n;
    c.m = ab->sel.m;
    c.W = ab->sel.W;
    c.selected = ab->sel.selected;
    c.ma_num = ab->sel.ma_num;
    c.aia_num = ab->sel.aia_num;
    if (n) {
        c.blocks_with_mem = 1;
        c.block_ma_sum = (double)ab->sel.ma_num / n;
        c.block_aia_sum = (double)ab->sel.aia_num / n;
    }
    add_counts(&a->funcs[b->func], &c);
    add_counts(&a->total, &c);
    return 0;
}

int analysis_run(const char *path, const select_params *p, analysis **out)
{
    *out = NULL;
    analysis *a = calloc(1, sizeof *a);
    if (!a)
        return ELF_E_NOMEM;
    a->params = *p;
    int rc = image_open(path, &a->img);
    if (!rc)
        rc = cfg_build(a->img, &a->cfg);
    if (rc) {
        analysis_free(a);
        return rc;
    }
    a->blocks = calloc(a->cfg->nblocks + 1, sizeof *a->blocks);
    a->funcs = calloc(a->img->nfuncs + 1, sizeof *a->funcs);
    vec exprs = {0, 0, 0, sizeof(sel_expr)};
    rc = a->blocks && a->funcs ? 0 : ELF_E_NOMEM;
    uint64_t *frames = malloc((a->img->nfuncs + 1) * sizeof *frames);
    if (!frames)
        rc = ELF_E_NOMEM;
    for (size_t i = 0; !rc && i < a->img->nfuncs; i++)
        frames[i] = frame_from(a, (uint32_t)i);
    for (size_t i = 0; !rc && i < a->cfg->nblocks; i++) {
        uint32_t fi = a->cfg->blocks[i].func;
        if (analyse_block(a, i, fi < a->img->nfuncs ? frames[fi] : NO_FRAME,
                          &exprs))
            rc = ELF_E_NOMEM;
    }
    free(frames);
    a->exprs = exprs.v;
    a->nexprs = exprs.n;
    if (rc) {
        analysis_free(a);
        return rc;
    }
    *out = a;
    return 0;
}

void analysis_free(analysis *a)
{
    if (!a)
        return;
    cfg_free(a->cfg);
    image_close(a->img);
    free(a->exprs);
    free(a->blocks);
    free(a->funcs);
    free(a);
}

/* ---- profiles ------------------------------------------------------------ */

static const cfg_block *block_starting_at(const analysis *a, uint64_t addr)
{
    const cfg_block *b = cfg_block_at(a->cfg, addr);
    return b && b->start == addr ? b : NULL;
}

void analysis_weigh_add(const analysis *a, analysis_weighted *w,
                        uint64_t addr, uint64_t count)
{
    w->entries++;
    const cfg_block *b = block_starting_at(a, addr);
    if (!b)
        return;
    w->matched++;
    const sel_block *s = &a->blocks[b - a->cfg->blocks].sel;
    if (!s->n || !count)
        return;
    w->executions += count;
    w->sum_ma += (double)count * s->ma_num / s->n;
    w->sum_aia += (double)count * s->aia_num / s->n;
    w->sum_mae += (double)count * s->ma_num;
    w->sum_aiae += (double)count * s->aia_num;
    w->sum_n += (double)count * s->n;
}

void analysis_weigh_done(analysis_weighted *w)
{
    if (!w->executions)
        return;
    w->ma = w->sum_ma / (double)w->executions;
    w->aia = w->sum_aia / (double)w->executions;
    w->ma_access = w->sum_mae / w->sum_n;
    w->aia_access = w->sum_aiae / w->sum_n;
}

int analysis_weigh(const analysis *a, const char *profile,
                   analysis_weighted *out, char *err, size_t errcap)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(profile, "r");
    if (!f) {
        snprintf(err, errcap, "%s", strerror(errno));
        return -1;
    }
    char line[256];
    unsigned lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = 0;
        uint64_t addr, count;
        char extra;
        int k = sscanf(line, "%" SCNx64 " %" SCNu64 " %c", &addr, &count, &extra);
        if (k == EOF)
            continue;
        if (k != 2) {
            snprintf(err, errcap, "line %u: expected 'ADDRESS COUNT'", lineno);
            fclose(f);
            return -1;
        }
        analysis_weigh_add(a, out, addr, count);
    }
    fclose(f);
    analysis_weigh_done(out);
    return 0;
}
