/*
 * rewrite/liveness.c - scratch-register liveness across blocks (see
 * liveness.h): a summary of each block (what it reads before writing,
 * what it writes, where its end leads), then the live-ins to a fixed
 * point, blocks visited from the last, since most edges lead forward or
 * to a loop's head.
 */
#include "rewrite/liveness.h"

#include "rewrite/emit.h"

#include <stdlib.h>

#define NO_BLOCK (-1)

typedef struct block_sum {
    uint8_t gen;                 /* read before written in the block */
    uint8_t kill;                /* written in the block */
    uint8_t fixed;               /* all live after gen and kill: the way on
                                    is not modelled */
    int32_t fall, target;        /* blocks the end leads to, or NO_BLOCK */
} block_sum;

/* The non-gap block that starts at addr, or NO_BLOCK. */
static int32_t block_starting(const cfg_program *cfg, uint64_t addr)
{
    const cfg_block *b = cfg_block_at(cfg, addr);
    if (!b || b->start != addr || (b->flags & CFG_BLOCK_GAP))
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

static int summarize(const analysis *a, block_sum *sums)
{
    const cfg_program *cfg = a->cfg;
    for (size_t i = 0; i < cfg->nblocks; i++) {
        const cfg_block *b = &cfg->blocks[i];
        block_sum *s = &sums[i];
        *s = (block_sum){ .fall = NO_BLOCK, .target = NO_BLOCK,
                          .fixed = (b->flags & CFG_BLOCK_GAP) != 0 };
        summing g = { cfg, s, b->end, 0 };
        if (!s->fixed && analysis_block_insns(a, b, sum_insn, &g) != 0)
            return -1;
        s->fixed |= !g.ended;
    }
    return 0;
}

static unsigned live_in(const block_sum *s, const uint8_t *in)
{
    unsigned out = LIVE_ALL;
    if (!s->fixed)
        out = (s->fall != NO_BLOCK ? in[s->fall] : 0) |
              (s->target != NO_BLOCK ? in[s->target] : 0);
    return (s->gen | (out & ~s->kill)) & LIVE_ALL;
}

int liveness_build(const analysis *a, liveness *lv)
{
    size_t n = a->cfg->nblocks;
    lv->cfg = a->cfg;
    lv->in = calloc(n ? n : 1, 1);
    block_sum *sums = malloc((n ? n : 1) * sizeof *sums);
    if (!lv->in || !sums || summarize(a, sums) != 0) {
        free(sums);
        liveness_free(lv);
        return -1;
    }
    for (int changed = 1; changed;) {
        changed = 0;
        for (size_t i = n; i-- > 0;) {
            uint8_t v = (uint8_t)live_in(&sums[i], lv->in);
            changed |= v != lv->in[i];
            lv->in[i] = v;
        }
    }
    free(sums);
    return 0;
}

void liveness_free(liveness *lv)
{
    free(lv->in);
    lv->in = NULL;
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
