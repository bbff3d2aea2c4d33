/*
 * rewrite/liveness.c - scratch-register liveness across blocks (see
 * liveness.h): a summary of each block (what it reads before writing,
 * what it writes, where its end leads), from the rewriter's first pass
 * or decoded here, then the live-ins to a fixed point, blocks visited
 * from the last, since most edges lead forward or to a loop's head.
 */
#include "rewrite/liveness.h"

#include "x86/emit.h"

#include <stdlib.h>

#define NO_BLOCK (-1)

struct block_sum {
    uint8_t noted;               /* summarized */
    uint8_t gen;                 /* read before written in the block */
    uint8_t kill;                /* written in the block */
    uint8_t fixed;               /* all live after gen and kill: the way on
                                    is not modelled */
    int32_t fall, target;        /* blocks the end leads to, or NO_BLOCK */
};
typedef struct block_sum block_sum;

/* The non-gap block that starts at addr, or NO_BLOCK. */
static int32_t block_starting(const cfg_program *cfg, uint64_t addr)
{
    const cfg_block *b = cfg_block_at(cfg, addr);
    if (!b || b->start != addr || (b->flags & (CFG_BLOCK_GAP | CFG_BLOCK_DATA)))
        return NO_BLOCK;
    return (int32_t)(b - cfg->blocks);
}

static unsigned step(const x86_insn *x, unsigned after)
{
    uint32_t use, kill;
    x86_gpr_use_kill(x, &use, &kill);
    return ((after & ~kill) | use) & LIVE_ALL;
}

typedef struct summing {
    const cfg_program *cfg;
    block_sum *s;
    uint64_t end;                /* the block's end */
    int ended;                   /* its last instruction was seen */
} summing;

/* Adds x to the block's summary; the way on is modelled only after the
 * block's last instruction, and only when it falls through or branches
 * directly to a block's start. */
static void sum_insn(const x86_insn *x, void *arg)
{
    summing *g = arg;
    block_sum *s = g->s;
    if (s->fixed)
        return;
    if (x->flow != X86_FLOW_NEXT && x->flow != X86_FLOW_JCC &&
        x->flow != X86_FLOW_JUMP) {
        s->fixed = 1; /* all live before it */
        return;
    }
    uint32_t use, kill;
    x86_gpr_use_kill(x, &use, &kill);
    s->gen |= (uint8_t)(use & ~s->kill & LIVE_ALL);
    s->kill |= (uint8_t)(kill & LIVE_ALL);
    int last = x->addr + x->length == g->end;
    g->ended |= last;
    if (x->flow == X86_FLOW_NEXT) {
        s->fall = last ? block_starting(g->cfg, g->end) : s->fall;
        s->fixed = last && s->fall == NO_BLOCK;
        return;
    }
    s->target = block_starting(g->cfg, x->target);
    s->fall = x->flow == X86_FLOW_JCC ? block_starting(g->cfg, g->end)
                                      : NO_BLOCK;
    s->fixed = !last || s->target == NO_BLOCK ||
               (x->flow == X86_FLOW_JCC && s->fall == NO_BLOCK);
}

/* Starts the summary of block bi in g. */
static void sum_begin(const liveness *lv, size_t bi, summing *g)
{
    const cfg_block *b = &lv->cfg->blocks[bi];
    block_sum *s = &lv->sums[bi];
    *s = (block_sum){ .noted = 1, .fall = NO_BLOCK, .target = NO_BLOCK,
                      .fixed = (b->flags & (CFG_BLOCK_GAP | CFG_BLOCK_DATA)) != 0 };
    *g = (summing){ lv->cfg, s, b->end, 0 };
}

void liveness_note(liveness *lv, size_t bi, size_t nb, const x86_insn *v,
                   size_t n)
{
    size_t k = 0;
    for (size_t i = bi; i < bi + nb && i < lv->cfg->nblocks; i++) {
        summing g;
        sum_begin(lv, i, &g);
        for (; k < n && v[k].addr < g.end; k++)
            if (v[k].addr >= lv->cfg->blocks[i].start)
                sum_insn(&v[k], &g);
        g.s->fixed |= !g.ended;
    }
}

static unsigned live_in(const block_sum *s, const uint8_t *in)
{
    unsigned out = LIVE_ALL;
    if (!s->fixed)
        out = (s->fall != NO_BLOCK ? in[s->fall] : 0) |
              (s->target != NO_BLOCK ? in[s->target] : 0);
    return (s->gen | (out & ~s->kill)) & LIVE_ALL;
}

int liveness_init(liveness *lv, const cfg_program *cfg)
{
    size_t n = cfg->nblocks ? cfg->nblocks : 1;
    lv->cfg = cfg;
    lv->in = calloc(n, 1);
    lv->sums = calloc(n, sizeof *lv->sums);
    if (!lv->in || !lv->sums) {
        liveness_free(lv);
        return -1;
    }
    return 0;
}

int liveness_solve(liveness *lv, const analysis *a)
{
    size_t n = lv->cfg->nblocks;
    for (size_t i = 0; i < n; i++) {
        if (lv->sums[i].noted)
            continue;
        summing g;
        sum_begin(lv, i, &g);
        if (!g.s->fixed &&
            analysis_block_insns(a, &lv->cfg->blocks[i], sum_insn, &g) != 0)
            return -1;
        g.s->fixed |= !g.ended;
    }
    for (int changed = 1; changed;) {
        changed = 0;
        for (size_t i = n; i-- > 0;) {
            uint8_t v = (uint8_t)live_in(&lv->sums[i], lv->in);
            changed |= v != lv->in[i];
            lv->in[i] = v;
        }
    }
    free(lv->sums);
    lv->sums = NULL;
    return 0;
}

void liveness_free(liveness *lv)
{
    free(lv->in);
    free(lv->sums);
    lv->in = NULL;
    lv->sums = NULL;
}

unsigned liveness_at(const liveness *lv, uint64_t addr)
{
    int32_t b = block_starting(lv->cfg, addr);
    return b == NO_BLOCK ? LIVE_ALL : lv->in[b];
}

unsigned liveness_before(const liveness *lv, const x86_insn *x,
                         unsigned after)
{
    switch (x->flow) {
    case X86_FLOW_NEXT:
        return step(x, after);
    case X86_FLOW_JCC:
        return step(x, after | liveness_at(lv, x->target));
    case X86_FLOW_JUMP:
        return step(x, liveness_at(lv, x->target));
    default:
        return LIVE_ALL;
    }
}
