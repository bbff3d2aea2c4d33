/*
 * entries.c - the possible entries of a file's code (analysis/entries.h):
 * a linear sweep of the executable sections beside the control-flow
 * graph, and every way in either of them, the data or the graph shows.
 * Marking too much costs the rewriter a window; marking too little would
 * let a jump land inside one, so every source errs towards marking.
 */
#include "analysis/entries.h"

#include <stdlib.h>
#include <string.h>

#include "sys/vec.h"
#include "x86/insn.h"

#define MAX_TABLE 4096       /* entries of one relative table, at most */

typedef struct sweeper {
    entry_map *m;
    const code_image *img;
    x86_decoder dec;
    vec bases;               /* uint64_t: rip-relative addresses of data */
    int oom;
} sweeper;

static void mark(entry_map *m, uint64_t a, uint8_t bit)
{
    if (a >= m->lo && a < m->hi)
        m->bits[a - m->lo] |= bit;
}

static int is_exec(const code_image *img, uint64_t a)
{
    const image_section *s = image_section_at(img, a);
    return s && s->exec && s->data;
}

/* The addresses x takes rip-relative, or as an immediate (a non-PIE
 * program's `mov $label, (%rbp)`: GHC's return addresses): code (a label
 * or function whose address is taken) is an entry; data taken with lea
 * may be a relative jump table. */
static void note_rip_refs(sweeper *s, const x86_insn *x)
{
    for (uint8_t i = 0; i < x->nvisible; i++) {
        const x86_operand *op = &x->ops[i];
        if (op->type == X86_OPND_IMM && !op->imm_relative && op->size >= 32 &&
            is_exec(s->img, (uint64_t)op->value)) {
            mark(s->m, (uint64_t)op->value, ENTRY_MAY);
            continue;
        }
        if (op->type != X86_OPND_MEM || op->base != X86_REG_RIP)
            continue;
        uint64_t t = op->target;
        if (is_exec(s->img, t)) {
            mark(s->m, t, ENTRY_MAY);
        } else if (x->op == X86_OP_LEA) {
            uint64_t *b = vec_push(&s->bases);
            if (b)
                *b = t;
            else
                s->oom = 1;
        }
    }
}

/* One instruction of the sweep at x->addr; *after_stop says the one
 * before did not go on, so this one (unless padding) is entered from
 * elsewhere if at all. */
static void note_insn(sweeper *s, const x86_insn *x, int *after_stop)
{
    entry_map *m = s->m;
    mark(m, x->addr, ENTRY_SWEEP);
    if (*after_stop && !x->is_padding) {
        mark(m, x->addr, ENTRY_MAY);
        *after_stop = 0;
    }
    switch (x->flow) {
    case X86_FLOW_CALL:
    case X86_FLOW_JUMP:
    case X86_FLOW_JCC:
        if (x->target)
            mark(m, x->target, ENTRY_MAY);
        break;
    default:
        break;
    }
    if (x->flow == X86_FLOW_CALL || x->flow == X86_FLOW_ICALL)
        mark(m, x->addr + x->length, ENTRY_MAY); /* the return address */
    if (x->flow == X86_FLOW_JUMP || x->flow == X86_FLOW_IJUMP ||
        x->flow == X86_FLOW_RET || (x->flow == X86_FLOW_STOP && !x->is_padding))
        *after_stop = 1;
    note_rip_refs(s, x);
}

/* The first function start after a, or UINT64_MAX. */
static uint64_t next_func(const code_image *img, size_t *fi, uint64_t a)
{
    while (*fi < img->nfuncs && img->funcs[*fi].start <= a)
        (*fi)++;
    return *fi < img->nfuncs ? img->funcs[*fi].start : UINT64_MAX;
}

/* Decodes a section from its start, one instruction after the other; an
 * undecodable byte is stepped over, and an instruction that would run
 * over a function's start gives way to it. */
static void sweep_section(sweeper *s, const image_section *sec)
{
    size_t fi = 0;
    int after_stop = 1;
    uint64_t a = sec->addr, end = sec->addr + sec->size;
    uint64_t f = next_func(s->img, &fi, a);
    while (a < end) {
        x86_insn x;
        if (x86_decode_flow(&s->dec, sec->data + (a - sec->addr), end - a, a, &x)) {
            a++;
            after_stop = 1;
        } else if (a + x.length > f) {
            a = f; /* a function starts inside it */
        } else {
            note_insn(s, &x, &after_stop);
            a += x.length;
        }
        if (a == f) /* never past it: see above */
            f = next_func(s->img, &fi, a);
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Relative jump tables (`lea T(%rip),%b; movslq (%b,%i,4),%x; add %b,%x;
 * jmp *%x`) whose bound or use the graph did not see: from each data
 * address code takes with lea, 32-bit entries while each leads to an
 * instruction start of the sweep. */
static void relative_tables(sweeper *s)
{
    uint64_t *b = s->bases.v;
    if (s->bases.n)
        qsort(b, s->bases.n, sizeof *b, cmp_u64);
    for (size_t i = 0; i < s->bases.n; i++) {
        if (i && b[i] == b[i - 1])
            continue;
        for (uint64_t k = 0; k < MAX_TABLE; k++) {
            int32_t e;
            if (image_read(s->img, b[i] + 4 * k, &e, 4) != 0)
                break;
            uint64_t t = b[i] + (uint64_t)(int64_t)e;
            if (!(entry_bits(s->m, t) & ENTRY_SWEEP))
                break;
            mark(s->m, t, ENTRY_MAY);
        }
    }
}

/* What the graph knows: functions, the entry point, blocks entered by a
 * branch or a table, code addresses in the data; and where its decoding
 * and the sweep's part. */
static void from_graph(entry_map *m, const cfg_program *cfg)
{
    const code_image *img = cfg->img;
    for (size_t i = 0; i < img->nfuncs; i++) /* a gap's start is none */
        if (img->funcs[i].source != FUNC_GAP)
            mark(m, img->funcs[i].start, ENTRY_MAY);
    mark(m, img->entry, ENTRY_MAY);
    for (size_t i = 0; i < cfg->ncode_ptrs; i++)
        mark(m, cfg->code_ptrs[i], ENTRY_MAY);
    for (size_t i = 0; i < cfg->nblocks; i++)
        if (cfg->blocks[i].flags & (CFG_BLOCK_ENTRY | CFG_BLOCK_BRANCH_TARGET |
                                    CFG_BLOCK_TABLE_TARGET | CFG_BLOCK_GAP))
            mark(m, cfg->blocks[i].start, ENTRY_MAY);
    for (size_t i = 0; i < cfg->ninsn; i++)
        m->disagree += !(entry_bits(m, cfg->insn_addr[i]) & ENTRY_SWEEP);
}

int entry_map_build(const cfg_program *cfg, entry_map **out)
{
    const code_image *img = cfg->img;
    *out = NULL;
    entry_map *m = calloc(1, sizeof *m);
    if (!m)
        return ELF_E_NOMEM;
    m->lo = UINT64_MAX;
    for (size_t i = 0; i < img->nsecs; i++) {
        const image_section *sec = &img->secs[i];
        if (!sec->exec || !sec->data || !sec->size)
            continue;
        m->lo = sec->addr < m->lo ? sec->addr : m->lo;
        m->hi = sec->addr + sec->size > m->hi ? sec->addr + sec->size : m->hi;
    }
    if (m->lo >= m->hi) {
        m->lo = m->hi = 0;
        *out = m;
        return 0;
    }
    sweeper s = { .m = m, .img = img, .bases = { NULL, 0, 0, sizeof(uint64_t) } };
    m->bits = calloc(m->hi - m->lo, 1);
    if (!m->bits || x86_decoder_init(&s.dec) != 0) {
        entry_map_free(m);
        return ELF_E_NOMEM;
    }
    for (size_t i = 0; i < img->nsecs; i++)
        if (img->secs[i].exec && img->secs[i].data)
            sweep_section(&s, &img->secs[i]);
    relative_tables(&s);
    free(s.bases.v);
    if (s.oom) {
        entry_map_free(m);
        return ELF_E_NOMEM;
    }
    from_graph(m, cfg);
    for (uint64_t a = 0; a < m->hi - m->lo; a++)
        m->entries += m->bits[a] & ENTRY_MAY;
    *out = m;
    return 0;
}

void entry_map_free(entry_map *m)
{
    if (!m)
        return;
    free(m->bits);
    free(m);
}

int entry_map_any(const entry_map *m, uint64_t from, uint64_t to)
{
    for (uint64_t a = from; a < to; a++)
        if (entry_bits(m, a) & ENTRY_MAY)
            return 1;
    return 0;
}
