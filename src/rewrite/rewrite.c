/*
 * rewrite/rewrite.c - the ELF rewriter: checks the input, runs the static
 * analysis, plans a patch window at each selected instruction (whole
 * instructions of a chain of blocks that fall into each other, at least
 * the 5 bytes of a jmp rel32 or fewer and the padding after a return;
 * an int3 place where none fits), works out which scratch registers are
 * live there, emits the trampolines (and with --profile the block
 * counters) into a new segment, sends direct branches to int3 places
 * straight to their trampolines, writes last the jumps whose displacement
 * must carry int3s or a byte they share with the next instruction
 * (through stubs: rewrite/stubs.h), lays out the segment's header, tables
 * and program header table, and has elf_input.c write the copy: the
 * original bytes with the jumps over the windows, the segment and the
 * stubs' pages at the end.  A first pass plans without emitting, to know
 * the int3 places short branches lead to.
 *
 * One file: planning a chain's windows and emitting its trampolines share
 * the rewriter's state (liveness, elision, traps, checks, branches).
 */
#define _GNU_SOURCE
#include "rewrite/rewrite.h"

#include "analysis/analysis.h"
#include "analysis/entries.h"
#include "rewrite/elf_input.h"
#include "x86/emit.h"
#include "rewrite/liveness.h"
#include "rewrite/stubs.h"
#include "rewrite/window.h"
#include "sys/bisect.h"
#include "sys/page.h"
#include "sys/vec.h"
#include "trace/pack.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <inttypes.h>
#include <string.h>
#include <zstd.h>

/* zstd level of the compressed site table: made once per rewrite, written
 * into every trace (libc's 1.1 MB: 145 KB in 20 ms; level 1, 171 KB) */
#define SITES_LEVEL 9

static uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) & ~(a - 1); }

/* ---- planning and emitting ---- */

/* A chain's instructions as collected (sys/vec.h); the planning reads
 * them as an insn_vec (rewrite/window.h). */
typedef struct insn_list {
    vec v;
    int oom;
} insn_list;

static void collect(const x86_insn *x, void *arg)
{
    insn_list *l = arg;
    x86_insn *to = vec_push(&l->v);
    if (to)
        *to = *x;
    else
        l->oom = 1;
}

/* What becomes of one selected operand of a block (plan_elision). */
typedef struct op_plan {
    uint32_t lead;            /* the operand whose entry stands for it too
                                 (elided), or SEL_NONE */
    uint32_t due;             /* elided after other logged operands: the
                                 last of them (memtap_site.due), else
                                 SEL_NONE */
    uint32_t site;            /* its site index once emitted, else
                                 SEL_NONE */
    uint32_t lead_min;        /* the least lead of this operand and those
                                 after it (past_leader) */
} op_plan;

typedef struct rewriter {
    const rewrite_options *opt;
    analysis *a;
    elf_input *in;
    code_buf code;            /* the segment */
    mt_site *sites;
    uint32_t nsites, max_sites;
    uint64_t *blocks;         /* --profile: counted blocks' starts */
    uint32_t nblocks, max_blocks;
    vec traps;                /* mt_trap */
    vec checks;               /* mt_check */
    vec branches;             /* branch_ref: direct branches that may lead
                                 to an int3 site */
    int planning;             /* the first pass: windows are planned, not
                                 emitted, to find the int3 places */
    vec places;               /* uint64_t: the first pass' int3 places,
                                 sorted (short_to_place) */
    x86_decoder dec;          /* for the padding after a chain */
    vec pads_used;            /* pad_region: padding windows' jumps took */
    vec pads;                 /* pad_region: free padding, by address */
    vec islands;              /* island */
    vec held;                 /* held_jump, by address */
    vec placed;               /* uint64_t: int3 places of 2 bytes or more
                                 at a window's start (islands_for_places) */
    uint64_t prefixed;        /* insn_vec.prefixed, from one chain to the
                                 next */
    vec holes;                /* stub_hole: left among the trampolines */
    size_t first_hole;        /* abi.h; 0 before the first trampoline */
    liveness lv;              /* live-ins of the file's blocks */
    entry_map *em;            /* where the file's code may be entered */
    uint8_t *live;            /* per instruction of the current chain */
    size_t live_cap;
    uint8_t *start;           /* insn_vec.start of the current chain */
    size_t start_cap;
    op_plan *plan;            /* per operand of the current block */
    size_t plan_cap;
    uint64_t header_vaddr, count_stub_addr;
    log_refs log;                /* what the log sequences refer to */
    rewrite_report *rep;
} rewriter;

/* A direct jump, conditional jump or call with a rel32 (in the original
 * code or a trampoline's copy) whose target may be an int3 site: it is
 * sent to that site's trampoline instead (redirect_branches). */
typedef struct branch_ref {
    uint64_t field;           /* link-time address of the displacement */
    uint64_t target;
    uint64_t next;            /* a short branch (rel8) left in the file:
                                 the address after it; else 0 */
    uint64_t sent;            /* the trampoline redirect_branches sent it
                                 to; 0: none */
} branch_ref;

static int add_branch(rewriter *r, uint64_t field, uint64_t target,
                      uint64_t next)
{
    branch_ref *b = vec_push(&r->branches);
    if (!b)
        return -1;
    b->field = field;
    b->target = target;
    b->next = next;
    b->sent = 0;
    return 0;
}

/* Padding after a return or jump, [at, end), where a short branch may
 * be sent through a jump to a trampoline (an island); `at` moves on as
 * islands take it. */
typedef struct pad_region {
    uint64_t at, end;
} pad_region;

/* An island made: a jump at `at` to the trampoline of `target`'s place,
 * over the padding bytes `was`. */
typedef struct island {
    uint64_t at, target, tramp;
    uint8_t was[JMP_LEN];
} island;

/* The branch a trampoline has just ended with (emitted from `before`):
 * jmp rel32 or jcc rel32. */
static int note_emitted_branch(rewriter *r, size_t before, uint64_t target)
{
    const uint8_t *p = r->code.p;
    size_t n = r->code.len - before, e = r->code.len;
    if ((n >= 5 && p[e - 5] == 0xe9) ||
        (n >= 6 && p[e - 6] == 0x0f && (p[e - 5] & 0xf0) == 0x80))
        return add_branch(r, r->code.base + e - 4, target, 0);
    return 0;
}

/* The direct branches among instructions [i, j) of the original code that
 * keep their bytes. */
static int note_kept_branches(rewriter *r, const x86_insn *v, size_t i,
                              size_t j)
{
    for (size_t k = i; k < j; k++) {
        unsigned size = v[k].branch_size;
        if ((v[k].flow == X86_FLOW_JUMP || v[k].flow == X86_FLOW_JCC ||
             v[k].flow == X86_FLOW_CALL) && v[k].target &&
            (size == 32 || size == 8) &&
            agreed(r->em, &v[k]) && /* its field is not another's bytes */
            add_branch(r, v[k].addr + v[k].branch_at, v[k].target,
                       size == 8 ? v[k].addr + v[k].length : 0) != 0)
            return -1;
    }
    return 0;
}

static uint32_t site_count(const rewriter *r, const sel_expr *x)
{
    switch (r->opt->mode) {
    case MT_MODE_MA: return x->class_size;
    case MT_MODE_AIA: return x->aia_count;
    default: return 1;
    }
}

/* The memory operand of insn that an expression of it stands for: the
 * first modelled one at or after position *k with its size and kind (the
 * analysis makes no expression for an operand it cannot model). */
static const x86_mem *operand_of(const rewriter *r, const x86_insn *insn,
                                 const sel_expr *x, unsigned *k)
{
    unsigned seen = 0;
    for (unsigned i = 0; i < insn->nmem; i++) {
        const x86_mem *m = &insn->mem[i];
        if (!analysis_models(m, r->opt->params.implicit))
            continue;
        if (seen++ >= *k && m->size == x->size && m->read == x->read &&
            m->write == x->write) {
            *k = seen;
            return m;
        }
    }
    return NULL;
}

/* A byte per instruction of the current chain in *a (room for *cap),
 * grown to n: 0, or -1 when out of memory. */
static int per_insn(uint8_t **a, size_t *cap, size_t n)
{
    if (n > *cap) {
        uint8_t *g = realloc(*a, n);
        if (!g)
            return -1;
        *a = g;
        *cap = n;
    }
    return 0;
}

/* Which of rax, rcx and rdx each instruction of the chain may need before
 * it runs: a backward pass from what the blocks after the chain need
 * (rewrite/liveness.h).  The first pass plans windows without them: all
 * count as live there. */
static int compute_liveness(rewriter *r, const insn_vec *iv)
{
    if (per_insn(&r->live, &r->live_cap, iv->n) != 0)
        return -1;
    if (r->planning || iv->n == 0) {
        memset(r->live, LIVE_ALL, iv->n);
        return 0;
    }
    const x86_insn *last = &iv->v[iv->n - 1];
    unsigned live = liveness_at(&r->lv, last->addr + last->length);
    for (size_t k = iv->n; k-- > 0;) {
        live = liveness_before(&r->lv, &iv->v[k], live);
        r->live[k] = (uint8_t)live;
    }
    return 0;
}

/* Whether an expression is base + index * scale + displacement of
 * general registers (no segment, 64-bit): its address and another's of
 * the same registers differ by the displacements. */
static int plain_rri(const bid_expr *e)
{
    return e->tmpl == BID_RRI && e->r1.id >= 1 && e->r1.id <= BID_NREGS &&
           e->r2.id <= BID_NREGS;
}

static int same_registers(const bid_expr *a, const bid_expr *b)
{
    return a->r1.id == b->r1.id && a->r1.inc == b->r1.inc &&
           a->r2.id == b->r2.id && a->r2.inc == b->r2.inc &&
           a->r2.scale == b->r2.scale;
}

static int string_op(const x86_insn *in, mt_trap *t);

/* op_plan.due of a follower of the last logged operand whose records come
 * after those due there: before the next entry's. */
#define DUE_NEXT (SEL_NONE - 1)

/* A logged operand of the current stretch of straight-line code, as
 * plan_elision knows it. */
typedef struct stretch_op {
    uint32_t op;              /* its operand */
    uint32_t at;              /* its entry's place in the stretch */
    uint32_t members;         /* its followers so far */
    uint32_t held;            /* records of followers due later held
                                 (trace_deferred) as its entry is read */
    int source;               /* a plain RRI operand at a movable
                                 instruction: others may follow it */
} stretch_op;

/* Whether x[i] may follow the logged operand l: the same registers, a
 * displacement an int32 away, and room in l's group. */
static int may_follow(const sel_expr *x, const stretch_op *l, uint32_t i)
{
    int64_t delta = x[i].e.imm - x[l->op].e.imm;
    return l->source && l->members < MEMTAP_FOLLOWERS_MAX &&
           plain_rri(&x[i].e) && same_registers(&x[l->op].e, &x[i].e) &&
           delta == (int32_t)delta;
}

/* The latest of the stretch's logged operands w[after..nw-1) that x[i]
 * may follow with its records (rec of them) due after the last one's
 * entry, or nw.  Its records are held from that one's entry on, up to
 * MEMTAP_DEFERRED_MAX with the others held; and the places between the
 * entries where records are still due (a cut there would reorder them)
 * run no more than TRACE_WINDOW_ENTRIES - 1 in a row, so that a cut is
 * found that many entries back from anywhere (trace_window_start).
 * cuts is the last such run, [cuts[0], cuts[1]), place t being before
 * the stretch's entry t; it grows with the operand taken. */
static uint32_t earlier_leader(const sel_expr *x, const stretch_op *w,
                               uint32_t nw, uint32_t after, uint32_t i,
                               uint32_t rec, uint32_t cuts[2])
{
    uint32_t most = w[nw - 1].held; /* of w[j..nw) */
    uint32_t last = w[nw - 1].at;
    for (uint32_t j = nw - 1; j-- > after;) { /* latest first */
        most = w[j].held > most ? w[j].held : most;
        uint32_t lo = w[j].at + 1; /* places lo .. last join the run */
        if (lo <= cuts[1] && cuts[0] < lo)
            lo = cuts[0]; /* the run before goes on */
        if (most + rec <= MEMTAP_DEFERRED_MAX &&
            last + 1 - lo < TRACE_WINDOW_ENTRIES && may_follow(x, &w[j], i)) {
            cuts[0] = lo;
            cuts[1] = last + 1;
            return j;
        }
    }
    return nw;
}

/* Lossless elision (memtap/trace.h): a selected operand of plain RRI
 * registers is not logged when another logged before it in the stretch
 * (only straight-line instructions between: nothing that jumps, calls,
 * makes a system call or records an event of its own, as a string
 * operation does) used the same register incarnations, a
 * displacement an int32 away: that one's entry stands for it too.  It
 * joins the group of the operand logged last before it while that group
 * is open (its records right after that entry's); else the group of an
 * earlier one (up to TRACE_WINDOW_ENTRIES back) with its records due
 * after the last logged entry.  The reader puts those after the last
 * entry's group, in the order their leaders came, so one due there from
 * a leader before another's closes the way. */
static int plan_elision(rewriter *r, const insn_vec *iv, const sel_expr *x,
                        uint32_t nx)
{
    if (nx > r->plan_cap) {
        op_plan *l = realloc(r->plan, nx * sizeof *l);
        if (!l)
            return -1;
        r->plan = l;
        r->plan_cap = nx;
    }
    stretch_op w[TRACE_WINDOW_ENTRIES]; /* its last logged operands */
    uint32_t nw = 0, open = 0, after = 0; /* the last's group open; the
                                              latest leader due after it */
    uint32_t cuts[2] = { 0, 0 }; /* earlier_leader's run of places */
    size_t k = 0; /* instruction of the operand before */
    for (uint32_t i = 0; i < nx; i++) {
        r->plan[i] = (op_plan){ SEL_NONE, SEL_NONE, SEL_NONE, SEL_NONE };
        if (!x[i].selected)
            continue;
        for (; k < iv->n && iv->v[k].addr < x[i].addr; k++) {
            mt_trap str;
            if (iv->v[k].flow != X86_FLOW_NEXT || string_op(&iv->v[k], &str) ||
                (iv->start && k + 1 < iv->n && iv->start[k + 1]) ||
                (k + 1 < iv->n &&
                 (entry_bits(r->em, iv->v[k + 1].addr) & ENTRY_MAY)))
                nw = cuts[0] = cuts[1] = 0; /* a branch, an event of
                                               its own, another block's
                                               registers, or a way in
                                               past the leaders */
        }
        uint32_t l = nw; /* of w: the leader, or nw to log it */
        if (r->opt->no_elision || !nw) {
        } else if (open && may_follow(x, &w[nw - 1], i)) {
            l = nw - 1;
        } else {
            uint32_t rec = (uint32_t)(x[i].read != 0) + (x[i].write != 0);
            l = earlier_leader(x, w, nw, after, i, rec, cuts);
            if (l < nw) { /* held from entry l's records to entry nw-1's */
                for (uint32_t j = l; j < nw; j++)
                    w[j].held += rec;
                r->plan[i].due = w[nw - 1].op;
            } else if (w[nw - 1].held + rec <= MEMTAP_DEFERRED_MAX &&
                       may_follow(x, &w[nw - 1], i)) {
                /* the last's, after those due there: before the next */
                l = nw - 1;
                w[l].held += rec;
                r->plan[i].due = DUE_NEXT;
            }
            if (l < nw) {
                r->rep->elided_later++;
                open = 0;
                after = l;
            }
        }
        if (l < nw) {
            r->plan[i].lead = w[l].op;
            w[l].members++;
            r->rep->elided++;
            continue;
        }
        if (nw == TRACE_WINDOW_ENTRIES) {
            memmove(w, w + 1, (nw - 1) * sizeof *w);
            nw--;
        }
        int ends;
        w[nw] = (stretch_op){ i, nw ? w[nw - 1].at + 1 : 0, 0, 0,
                              plain_rri(&x[i].e) && k < iv->n &&
                                  movable(&iv->v[k], &ends) };
        nw++;
        open = 1;
        after = 0;
    }
    for (uint32_t i = nx, least = SEL_NONE; i-- > 0;) {
        least = r->plan[i].lead < least ? r->plan[i].lead : least;
        r->plan[i].lead_min = least;
    }
    return 0;
}

/* Whether operand i of the block logs an entry. */
static int logs(const rewriter *r, const sel_expr *x, uint32_t i)
{
    return x[i].selected && r->plan[i].lead == SEL_NONE;
}

/* Counts the saves of a sequence that uses the scratch registers `used`
 * where `live` are live. */
static void count_saves(rewriter *r, unsigned used, unsigned live)
{
    r->rep->saves += (unsigned)__builtin_popcount(used & live);
    r->rep->saves_skipped += (unsigned)__builtin_popcount(used & ~live);
}

/* Appends the table t to the segment's code; its offset into *at.  0, or
 * -1 when there is no room. */
static int append_table(code_buf *b, const vec *t, uint64_t *at)
{
    size_t bytes = t->n * t->elem;
    if (b->cap - b->len < bytes)
        return -1;
    *at = b->len;
    if (bytes)
        memcpy(b->p + b->len, t->v, bytes);
    b->len += bytes;
    return 0;
}

/* Makes room for need more bytes of the segment (the site and block
 * tables inside it move with it). */
static int reserve_code(rewriter *r, size_t need)
{
    if (need <= r->code.cap - r->code.len)
        return 0;
    size_t sites = (size_t)((uint8_t *)r->sites - r->code.p);
    size_t blocks = (size_t)((uint8_t *)r->blocks - r->code.p);
    uint8_t *p = realloc(r->code.p, r->code.len + need);
    if (!p)
        return -1;
    r->sites = (mt_site *)(void *)(p + sites);
    r->blocks = (uint64_t *)(void *)(p + blocks);
    r->code.p = p;
    r->code.cap = r->code.len + need;
    return 0;
}

/* Appends the site table compressed in the pieces a trace holds it in
 * (MT_SITES_PER_FRAME sites, a zstd frame each after its length), which
 * the runtime writes into every trace as they are. */
static size_t sites_z_bound(const rewriter *r)
{
    size_t need = 0;
    for (uint32_t first = 0; first < r->nsites; first += MT_SITES_PER_FRAME) {
        uint32_t n = mt_sites_piece(r->nsites, first);
        need += 4 + ZSTD_compressBound(n * sizeof(mt_site));
    }
    return need;
}

static int append_sites_z(rewriter *r, mt_rewrite_header *h)
{
    size_t need = sites_z_bound(r);
    if (reserve_code(r, need) != 0)
        return -1;
    ZSTD_CCtx *cctx = ZSTD_createCCtx();
    if (!cctx ||
        ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel,
                                            SITES_LEVEL)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1))) {
        ZSTD_freeCCtx(cctx);
        return -1;
    }
    size_t at = r->code.len;
    int rc = 0;
    for (uint32_t first = 0; first < r->nsites && !rc;
         first += MT_SITES_PER_FRAME) {
        uint32_t n = mt_sites_piece(r->nsites, first);
        uint8_t *o = r->code.p + r->code.len;
        size_t z = ZSTD_compress2(cctx, o + 4, r->code.cap - r->code.len - 4,
                                  r->sites + first, n * sizeof(mt_site));
        if (ZSTD_isError(z) || z > UINT32_MAX) {
            rc = -1;
            break;
        }
        uint32_t len = (uint32_t)z;
        memcpy(o, &len, 4);
        r->code.len += 4 + z;
    }
    ZSTD_freeCCtx(cctx);
    h->sites_z = rc || r->nsites == 0 ? 0 : at;
    h->sites_z_size = rc ? 0 : r->code.len - at;
    if (rc)
        r->code.len = at;
    return 0;
}

/* Appends the records each site's entry stands for, a byte a site (what
 * the runtime packs entries with; working them out at start-up read
 * libc's whole site table, a quarter of a millisecond a run). */
static int append_site_records(rewriter *r, mt_rewrite_header *h)
{
    if (!r->nsites)
        return 0;
    if (reserve_code(r, r->nsites) != 0)
        return -1;
    trace_site_table tab = { 0, r->sites, r->nsites, NULL };
    trace_sites one = { &tab, 1 };
    trace_site_records_fill(&one, 0, r->code.p + r->code.len);
    h->records = r->code.len;
    r->code.len += r->nsites;
    return 0;
}

/* Lists the check-once slot at `slot`, before the log sequence of the
 * next site, which has just been emitted (a sequence too long for the
 * slot's jump is left out). */
static int add_check(rewriter *r, uint64_t slot)
{
    uint64_t skip = code_here(&r->code) - (slot + 2);
    if (skip > 127)
        return 0;
    mt_check *c = vec_push(&r->checks);
    if (!c)
        return -1;
    memset(c, 0, sizeof *c);
    c->site = r->nsites;
    c->slot = (uint32_t)(slot - r->header_vaddr);
    c->skip = (uint32_t)skip;
    return 0;
}

/* The first of the block's operands x[0..nx) (by address) at or after
 * addr. */
static size_t operand_from(const sel_expr *x, uint32_t nx, uint64_t addr)
{
    return addr ? BISECT_AFTER(x, nx, addr, addr - 1) : 0;
}

/* Emits the logging of insn's selected operands; exprs are its block's.
 * A leader's elided followers take the site indices after its own (their
 * dues are set once the block's sites are: set_dues). */
static int emit_logs(rewriter *r, const x86_insn *insn, unsigned live,
                     const sel_expr *x, uint32_t nx)
{
    unsigned k = 0;
    for (uint32_t i = (uint32_t)operand_from(x, nx, insn->addr);
         i < nx && x[i].addr == insn->addr; i++) {
        const x86_mem *m = operand_of(r, insn, &x[i], &k);
        if (!logs(r, x, i))
            continue;
        uint32_t followers = 0, later = 0;
        for (uint32_t j = i + 1; j < nx && r->plan[j].lead_min <= i; j++) {
            followers += r->plan[j].lead == i;
            later += r->plan[j].lead == i && r->plan[j].due != SEL_NONE;
        }
        if (!m || !emit_log_addressable(m)) { /* and its group */
            r->rep->unaddressable += 1 + followers;
            r->rep->elided -= followers;
            r->rep->elided_later -= later;
            continue;
        }
        uint64_t slot = code_here(&r->code);
        int once = x[i].read && !x[i].write && !followers;
        if (r->max_sites - r->nsites < 1 + followers ||
            (once && emit_check_slot(&r->code) != 0) ||
            emit_log(&r->code, insn, m, r->nsites, &r->log, live) != 0 ||
            (once && add_check(r, slot) != 0))
            return -1;
        count_saves(r, LOG_USES, live);
        r->plan[i].site = r->nsites;
        mt_site *s = &r->sites[r->nsites++];
        memset(s, 0, sizeof *s);
        s->pc = insn->addr;
        s->count = site_count(r, &x[i]);
        s->size = (uint16_t)x[i].size;
        s->read = x[i].read;
        s->write = x[i].write;
        s->followers = (uint16_t)followers;
        r->rep->sites++;
        for (uint32_t j = i + 1; followers && j < nx && r->plan[j].lead_min <= i;
             j++) {
            if (r->plan[j].lead != i)
                continue;
            r->plan[j].site = r->nsites;
            mt_site *f = &r->sites[r->nsites++];
            memset(f, 0, sizeof *f);
            f->pc = x[j].addr;
            f->count = site_count(r, &x[j]);
            f->size = (uint16_t)x[j].size;
            f->read = x[j].read;
            f->write = x[j].write;
            f->delta = (int32_t)(x[j].e.imm - x[i].e.imm);
            f->elided = 1;
            r->rep->sites++;
        }
    }
    return 0;
}

/* Sets the due of each follower of the block's emitted sites elided
 * after other logged operands: the distance from its leader's site to the
 * site of the last of them.  For one due before the next entry (DUE_NEXT),
 * or when the last has no site (it turned out unaddressable), the
 * follower's own: a site no entry names, so its records come before the
 * next entry's (memtap/trace.h). */
static void set_dues(rewriter *r, uint32_t nx)
{
    for (uint32_t j = 0; j < nx; j++) {
        const op_plan *p = &r->plan[j];
        if (p->due == SEL_NONE || p->site == SEL_NONE)
            continue;
        uint32_t lead = r->plan[p->lead].site;
        uint32_t at = p->due == DUE_NEXT ? p->site : r->plan[p->due].site;
        if (at == SEL_NONE || at <= lead || at - lead > UINT8_MAX)
            at = p->site;
        r->sites[p->site].due = (uint8_t)(at - lead);
    }
}

static uint32_t selected_in(const rewriter *r, const x86_insn *insn,
                            const sel_expr *x, uint32_t nx)
{
    uint32_t n = 0;
    for (size_t i = operand_from(x, nx, insn->addr);
         i < nx && x[i].addr == insn->addr; i++)
        n += logs(r, x, (uint32_t)i);
    return n;
}

/* A string operation the runtime records from its registers (movs, stos,
 * lods, cmps, scas, with a repeat prefix or without), described in t; 0
 * for anything else. */
static int string_op(const x86_insn *in, mt_trap *t)
{
    uint8_t kind;
    switch (in->op) {
    case X86_OP_MOVS: kind = MT_STRING_MOVS; break;
    case X86_OP_STOS: kind = MT_STRING_STOS; break;
    case X86_OP_LODS: kind = MT_STRING_LODS; break;
    case X86_OP_CMPS: kind = MT_STRING_CMPS; break;
    case X86_OP_SCAS: kind = MT_STRING_SCAS; break;
    default:
        return 0; /* (x86_op leaves out movsd the SSE move) */
    }
    if (in->nmem == 0 || in->addr32)
        return 0;
    memset(t, 0, sizeof *t);
    t->insn = in->addr;
    t->string = kind;
    t->size = (uint8_t)in->mem[0].size;
    if (in->rep == X86_REP_NE)
        t->rep = MT_REP_NE;
    else if (in->rep == X86_REP_E)
        t->rep = MT_REP_E;
    return 1;
}

/* An int3 at pc: execution goes on at tramp; what str says (a string
 * operation) or nothing (a site's trap). */
static int add_trap(rewriter *r, uint64_t pc, uint64_t tramp,
                    const mt_trap *str)
{
    mt_trap *t = vec_push(&r->traps);
    if (!t)
        return -1;
    if (str)
        *t = *str;
    else
        memset(t, 0, sizeof *t);
    t->pc = pc;
    t->tramp = tramp;
    return 0;
}

/* Whether insn is a short direct branch (rel8, no rel32 to redirect) to
 * an int3 place the first pass found: it goes into a window, whose copy
 * of it has a rel32 that redirect_branches sends to the place's
 * trampoline. */
static int short_to_place(const rewriter *r, const x86_insn *insn)
{
    int ends;
    if ((insn->flow != X86_FLOW_JCC && insn->flow != X86_FLOW_JUMP) ||
        insn->branch_size != 8 || !movable(insn, &ends))
        return 0;
    const uint64_t *p = r->places.v;
    size_t i = bisect_after(p, r->places.n, sizeof *p, 0, insn->target);
    return i > 0 && p[i - 1] == insn->target;
}

/* Whether the instruction gets a trampoline: selected operands, a string
 * operation, or a short branch to an int3 place. */
static int wanted(const rewriter *r, const x86_insn *insn, const sel_expr *x,
                  uint32_t nx)
{
    mt_trap t;
    return selected_in(r, insn, x, nx) > 0 || string_op(insn, &t) ||
           short_to_place(r, insn);
}

/* Whether nothing of the chain gets a trampoline when none of its
 * operands is selected. */
static int nothing_wanted(const rewriter *r, const insn_vec *iv)
{
    mt_trap t;
    for (size_t i = 0; i < iv->n; i++)
        if (string_op(&iv->v[i], &t) || short_to_place(r, &iv->v[i]))
            return 0;
    return 1;
}

/* What one trampoline covers: `count` instructions of a block from w,
 * with their liveness; entered by a jump over them, or by int3 (`trap`)
 * when only the first is taken.  *block is the block's counter to bump,
 * or -1 when it already was. */
/* A window's jump whose displacement must carry given bytes: an int3 at
 * each instruction start under it (mask, value), and with `shares` its
 * last byte, the next instruction's first.  Written last, through a stub
 * (write_held_jumps); where no stub can be placed, the window is entered
 * through int3s instead, or, moved only for the jump before it, left as
 * it is. */
typedef struct held_jump {
    uint64_t at, tramp;
    uint64_t end;             /* of the window */
    uint64_t pad_end;         /* int3s after the jump up to here */
    uint32_t mask, value;
    uint32_t sites;           /* operands the window logs */
    int shares;
    int prefix;               /* 1: JMP_PREFIX before the jump */
    int trapped;              /* no stub served it: int3 at its start */
} held_jump;

/* Writes the first n bytes of the held jump h's jump to `to`, at file
 * offset off, and the int3s after it. */
static void write_jump(rewriter *r, const held_jump *h, size_t off,
                       uint64_t to, size_t n)
{
    uint8_t jump[JMP_LEN + 1];
    size_t len = JMP_LEN + (size_t)h->prefix;
    jump[0] = JMP_PREFIX;
    encode_patch_jump(jump + 1, h->at + (uint64_t)h->prefix, to);
    memcpy(elf_input_patch(r->in, off, n), jump + 1 - h->prefix, n);
    if (h->pad_end > h->at + len)
        memset(elf_input_patch(r->in, off + len, h->pad_end - h->at - len), 0xcc,
               h->pad_end - h->at - len);
}

typedef struct window {
    const x86_insn *w;
    const uint8_t *live;
    const uint8_t *start;     /* insn_vec.start from w, or NULL */
    size_t count;
    int trap;
    int fit;                  /* WINDOW_*, 0 for trap */
    int prefix;               /* its jump has a prefix (insn_vec.prefixed) */
    const x86_insn *tail;     /* a window whose jump shares the next
                                 instruction's first byte: that one, run
                                 by the trampoline too, so that a loop
                                 does not run that byte as two
                                 instructions; else NULL */
} window;

/* Whether code may be entered at the window's instruction k > 0 (past
 * its jump): a branch target of the chain, or any possible entry. */
static int inner_entry(const rewriter *r, const window *win, size_t k)
{
    return (win->start && (win->start[k] & BLOCK_ENTRY)) ||
           (entry_bits(r->em, win->w[k].addr) & ENTRY_MAY);
}

/* Whether an operand elided at or after addr has its leader before it
 * (a leader comes before its followers: its index is below that of the
 * first operand at addr). */
static int past_leader(const rewriter *r, const sel_expr *x, uint32_t nx,
                       uint64_t addr)
{
    size_t from = operand_from(x, nx, addr);
    return from < nx && r->plan[from].lead_min < from;
}

/* The copy of an instruction a trampoline runs (*ends: it leaves). */
static int emit_moved(rewriter *r, const x86_insn *insn, const uint8_t *bytes,
                      int *ends)
{
    movable(insn, ends);
    size_t before = r->code.len;
    int bad;
    switch (insn->flow) {
    case X86_FLOW_JUMP: bad = emit_jump(&r->code, insn->target); break;
    case X86_FLOW_JCC: bad = emit_jcc(&r->code, insn); break;
    case X86_FLOW_CALL:
        bad = emit_call(&r->code, insn->target, insn->addr + insn->length);
        break;
    case X86_FLOW_ICALL: bad = emit_icall(&r->code, insn); break;
    default: bad = emit_relocated(&r->code, insn, bytes); break;
    }
    return bad || (insn->target && insn->flow != X86_FLOW_ICALL &&
                   note_emitted_branch(r, before, insn->target) != 0)
               ? -1 : 0;
}

/* More bytes than one window's trampoline takes: the room a trampoline
 * must have before the next stub hole (abi.h). */
#define HOLE_GUARD ((size_t)1 << 16)

/* The first stub hole (abi.h) of a segment whose first trampoline is at
 * offset len: the first whole one past it. */
static size_t first_hole_after(size_t len)
{
    return (len + HOLE_GUARD + MT_HOLE_SIZE) / MT_HOLE_PERIOD + 1;
}

/* Leaves the segment's next stub hole (abi.h) when the next trampoline
 * could reach it (before each window's); -1 when one did (or without
 * memory). */
static int leave_hole(rewriter *r)
{
    if (!r->first_hole)
        r->first_hole = first_hole_after(r->code.len);
    size_t end = (size_t)((r->first_hole + r->holes.n) * MT_HOLE_PERIOD),
           lo = end - MT_HOLE_SIZE;
    if (r->code.len + HOLE_GUARD <= lo)
        return 0;
    stub_hole *h = vec_push(&r->holes);
    if (r->code.len > lo || !h || reserve_code(r, end - r->code.len) != 0)
        return -1;
    memset(r->code.p + r->code.len, 0xcc, end - r->code.len);
    *h = (stub_hole){ r->code.base + lo, r->code.base + end };
    r->code.len = end;
    return 0;
}

static int emit_window(rewriter *r, const window *win, const sel_expr *x,
                       uint32_t nx, int64_t *block)
{
    if (leave_hole(r) != 0)
        return -1;
    const x86_insn *w = win->w;
    uint64_t start = w[0].addr;
    uint64_t end = w[win->count - 1].addr + w[win->count - 1].length;
    unsigned jlen = JMP_LEN + (unsigned)win->prefix;
    /* a jump longer than the window takes padding after it, or shares
     * the next instruction's first byte */
    uint64_t span = !win->trap && end - start < jlen &&
                            win->fit != WINDOW_SHARES
                        ? jlen : end - start;
    int64_t off = elf_input_offset(r->in, start, span);
    if (off < 0)
        return -1;
    uint64_t tramp = code_here(&r->code);
    uint64_t sites_before = r->rep->sites;
    if (*block >= 0) {
        if (emit_count(&r->code, (uint32_t)*block, r->count_stub_addr,
                       win->live[0]) != 0)
            return -1;
        count_saves(r, LIVE_ALL, win->live[0]);
        if (win->trap)
            r->rep->blocks_trapped++;
        *block = -1;
    }
    int ends = 0;
    mt_trap str, first_str;
    int first_is_string = win->trap && string_op(&w[0], &first_str);
    for (size_t k = 0; k < win->count; k++) {
        const uint8_t *bytes = r->in->bytes + off + (w[k].addr - start);
        if (k > 0) {
            /* an instruction start under the window's jump (an int3 its
             * displacement carries) or past it (written there):
             * whatever enters here, by a branch or in a way no analysis
             * saw, goes on through an int3 */
            if (add_trap(r, w[k].addr, code_here(&r->code), NULL) != 0)
                return -1;
            ((mt_trap *)r->traps.v)[r->traps.n - 1].past_leader =
                (uint8_t)past_leader(r, x, nx, w[k].addr);
            r->rep->entries += (uint64_t)inner_entry(r, win, k);
            r->rep->inner_traps++;
        }
        if (emit_logs(r, &w[k], win->live[k], x, nx) != 0)
            return -1;
        if (!(k == 0 && first_is_string) && string_op(&w[k], &str)) {
            /* moved into the trampoline: its own trap there (a nop
             * until the runtime writes the int3) */
            uint64_t at = code_here(&r->code);
            if (emit_nop(&r->code) != 0 ||
                add_trap(r, at, code_here(&r->code), &str) != 0)
                return -1;
            r->rep->strings++;
        }
        if (emit_moved(r, &w[k], bytes, &ends) != 0)
            return -1;
    }
    uint64_t back = end;
    if (!ends && win->tail) { /* its first byte shared, its bytes kept */
        int64_t toff = elf_input_offset(r->in, win->tail->addr, win->tail->length);
        if (toff < 0 || emit_moved(r, win->tail, r->in->bytes + toff, &ends) != 0)
            return -1;
        back = win->tail->addr + win->tail->length;
        r->rep->tails++;
    }
    size_t before = r->code.len;
    if (!ends && (emit_jump(&r->code, back) != 0 ||
                  note_emitted_branch(r, before, back) != 0))
        return -1;
    if (r->code.failed)
        return -1;
    if (win->trap) {
        r->rep->traps++;
        r->rep->trapped += r->rep->sites - sites_before;
        r->rep->strings += (uint64_t)first_is_string;
        if (!first_is_string && w[0].length >= 2) { /* islands_for_places */
            uint64_t *p = vec_push(&r->placed);
            if (!p)
                return -1;
            *p = start;
        }
        return add_trap(r, start, tramp, first_is_string ? &first_str : NULL);
    }
    /* from a branch target in it on, the bytes stay the file's, where
     * the runtime writes its int3 (the file runs as it did without) */
    uint64_t pad_end = end;
    for (size_t k = 1; k < win->count && pad_end == end; k++)
        if (inner_entry(r, win, k))
            pad_end = w[k].addr;
    if (span > end - start) {
        pad_region *u = vec_push(&r->pads_used);
        if (!u)
            return -1;
        u->at = end;
        u->end = start + span;
        r->rep->padded++;
    }
    r->rep->windows++;
    r->rep->displaced += win->count - 1;
    r->rep->prefixed += (uint64_t)win->prefix;
    r->rep->evicted += (uint64_t)(win->prefix && r->rep->sites == sites_before);
    held_jump h = { start, tramp, end, pad_end, 0, 0,
                    (uint32_t)(r->rep->sites - sites_before),
                    win->fit == WINDOW_SHARES, win->prefix, 0 };
    for (size_t k = 1; k < win->count && w[k].addr < start + jlen; k++) {
        unsigned shift = 8 * (unsigned)(w[k].addr - start - 1 - win->prefix);
        h.mask |= 0xffu << shift;
        h.value |= 0xccu << shift;
    }
    if (h.mask || h.shares) { /* its jump goes to a stub (held_jumps) */
        held_jump *p = vec_push(&r->held);
        if (!p)
            return -1;
        *p = h;
        return 0;
    }
    write_jump(r, &h, (size_t)off, tramp, jlen);
    return 0;
}

/* Drops the traps emit_window registered inside the window of h (an
 * instruction start under its jump or past it), the n of the table as
 * sorted: a window moved only for the jump before, whose jump could not
 * be written, stays as it is. */
static void drop_inner_traps(rewriter *r, const held_jump *h, size_t n)
{
    mt_trap *t = r->traps.v;
    for (size_t i = BISECT_AFTER(t, n, pc, h->at); i < n && t[i].pc < h->end; i++)
        t[i].tramp = 0; /* dead: compacted by write_held_jumps */
}

/* A window that fits, ending at j, takes in the next selected
 * instruction of the block when that one could have no window of its
 * own (no room after it, none between j and it) and everything up to it
 * can move: then it needs no int3.  Repeats; returns the new end. */
static size_t extend_window(const rewriter *r, const insn_vec *iv,
                            const sel_expr *x, uint32_t nx, size_t j)
{
    for (;;) {
        size_t k = j, end;
        while (k < iv->n && !wanted(r, &iv->v[k], x, nx))
            k++;
        int fits;
        if (k == iv->n)
            return j;
        plan_window(iv, k, &fits);
        if (fits || plan_earlier(iv, j, k, &end, &fits) < k)
            return j; /* it gets a window of its own */
        for (size_t m = j; m <= k; m++) {
            int ends;
            if (!movable(&iv->v[m], &ends) || (ends && m < k))
                return j;
        }
        j = k + 1;
    }
}

static int add_place(rewriter *r, uint64_t pc)
{
    uint64_t *p = vec_push(&r->places);
    if (!p)
        return -1;
    *p = pc;
    return 0;
}

/* The first pass' view of a window that fits: its branch targets past
 * its jump become int3 places. */
static int plan_entries(rewriter *r, const window *win)
{
    for (size_t k = 1; k < win->count; k++)
        if (inner_entry(r, win, k) && add_place(r, win->w[k].addr) != 0)
            return -1;
    return 0;
}

/* Short branches in a window that fits, moved for redirect_branches. */
static uint64_t shorts_in(const rewriter *r, const window *win)
{
    uint64_t n = 0;
    for (size_t k = 0; k < win->count; k++)
        n += (uint64_t)short_to_place(r, &win->w[k]);
    return n;
}

/* Sites in [i, j) that no jump can reach: each instruction with selected
 * operands gets its own trampoline, entered through int3. */
static int trap_each(rewriter *r, const insn_vec *iv, size_t i, size_t j,
                     const sel_expr *x, uint32_t nx, int64_t *block)
{
    for (size_t k = i; k < j; k++) {
        uint32_t sel = selected_in(r, &iv->v[k], x, nx);
        int ends;
        mt_trap t;
        if (!sel && !string_op(&iv->v[k], &t))
            continue; /* a short branch: it stays as it is */
        if (!movable(&iv->v[k], &ends)) {
            r->rep->no_room += sel;
            continue;
        }
        if (!agreed(r->em, &iv->v[k])) { /* an int3 there may split an
                                            instruction of the sweep's */
            r->rep->undecided += sel;
            continue;
        }
        if (r->planning) {
            if (sel && add_place(r, iv->v[k].addr) != 0)
                return -1;
            continue;
        }
        window win = { iv->v + k, r->live + k, NULL, 1, 1, 0, 0, NULL };
        if (emit_window(r, &win, x, nx, block) != 0)
            return -1;
    }
    return 0;
}

/* --profile: a block none of whose operands was patched still needs its
 * counter: the first place a jump fits, else int3 on a movable one. */
static int count_alone(rewriter *r, const insn_vec *iv, int64_t *block)
{
    for (size_t i = 0; i < iv->n; i++) {
        int fits;
        size_t j = plan_window(iv, i, &fits);
        if (fits) {
            window win = { iv->v + i, r->live + i, NULL, j - i, 0, fits,
                           iv->v[i].addr == iv->prefixed, NULL };
            return emit_window(r, &win, NULL, 0, block);
        }
    }
    for (size_t i = 0; i < iv->n; i++) {
        int ends;
        if (movable(&iv->v[i], &ends)) {
            window win = { iv->v + i, r->live + i, NULL, 1, 1, 0, 0, NULL };
            return emit_window(r, &win, NULL, 0, block);
        }
    }
    r->rep->blocks_uncounted++;
    return 0;
}

/* Whether block bi+1 is entered only from block bi (falling through its
 * last instruction: a conditional branch, or any that does not branch)
 * or by direct branches: no table or data points at it, and it is no
 * function's entry.  A window may then span the two blocks (the
 * trampoline's copy of the branch jumps to its target, and falls through
 * to the copy of what follows), so long as a branch target is not among
 * the bytes of the window's jump: from the target on, the window keeps
 * the file's bytes, the runtime writes an int3 there, and the branches
 * with a rel32 are sent to the trampoline instead (redirect_branches). */
static int falls_through_only(const rewriter *r, size_t bi)
{
    const cfg_program *cfg = r->a->cfg;
    if (bi + 1 >= cfg->nblocks)
        return 0;
    const cfg_block *b = &cfg->blocks[bi], *next = b + 1;
    const analysis_block *ab = &r->a->blocks[bi];
    int falls = b->exit == X86_FLOW_JCC || b->exit == X86_FLOW_NEXT ||
                b->exit == X86_FLOW_SYSCALL;
    return falls && b->end == next->start &&
           b->func == next->func && !(b->flags & (CFG_BLOCK_GAP | CFG_BLOCK_DATA)) &&
           (next->flags & ~CFG_BLOCK_BRANCH_TARGET) == 0 &&
           r->a->blocks[bi + 1].first_expr == ab->first_expr + ab->sel.n;
}

/* The end of the padding instructions (nops, int3) from `from`, up to
 * `limit`. */
static uint64_t padding_from(const rewriter *r, uint64_t from, uint64_t limit)
{
    uint64_t end = from;
    while (end < limit) {
        x86_insn pad;
        int64_t off = elf_input_offset(r->in, end, 1);
        if (off < 0 || x86_decode(&r->dec, r->in->bytes + off,
                                  r->in->size - (size_t)off, end, &pad) != 0 ||
            !pad.is_padding || elf_input_offset(r->in, end, pad.length) < 0)
            break;
        end += pad.length;
    }
    return end < limit ? end : limit;
}

/* Whether a block's last instruction does not go on (what follows it
 * is only reached by a branch, or is padding). */
static int ends_flow(const cfg_block *b)
{
    return b->exit == X86_FLOW_RET || b->exit == X86_FLOW_JUMP ||
           b->exit == X86_FLOW_IJUMP;
}

/* insn_vec.pad_end of a chain whose last block is bi: when that block
 * ends with a return or a jump, the padding after it up to 4 bytes (what
 * a jump needs beyond one byte of instruction), short of the next block. */
static uint64_t padding_after(const rewriter *r, size_t bi)
{
    const cfg_program *cfg = r->a->cfg;
    const cfg_block *b = &cfg->blocks[bi];
    uint64_t limit = b->end + JMP_LEN - 1;
    if (!ends_flow(b))
        return b->end;
    if (bi + 1 < cfg->nblocks && cfg->blocks[bi + 1].start < limit)
        limit = cfg->blocks[bi + 1].start;
    return padding_from(r, b->end, limit);
}

/* The free padding of the file, after the windows' jumps took theirs:
 * where islands may go (at most 256 bytes after a block: a short branch
 * reaches 128). */
static int find_pads(rewriter *r)
{
    const cfg_program *cfg = r->a->cfg;
    const pad_region *used = r->pads_used.v;
    size_t u = 0;
    for (size_t bi = 0; bi < cfg->nblocks; bi++) {
        const cfg_block *b = &cfg->blocks[bi];
        if (!ends_flow(b))
            continue;
        uint64_t at = b->end, limit = at + 256;
        while (u < r->pads_used.n && used[u].at < at)
            u++;
        if (u < r->pads_used.n && used[u].at == at)
            at = used[u].end;
        if (bi + 1 < cfg->nblocks && cfg->blocks[bi + 1].start < limit)
            limit = cfg->blocks[bi + 1].start;
        uint64_t end = at < limit ? padding_from(r, at, limit) : at;
        if (end - at >= JMP_LEN) {
            pad_region *p = vec_push(&r->pads);
            if (!p)
                return -1;
            p->at = at;
            p->end = end;
        }
    }
    return 0;
}

/* insn_vec.start of a chain of nb > 1 blocks. */
static int mark_starts(rewriter *r, const cfg_block *b, size_t nb,
                       insn_vec *iv)
{
    if (per_insn(&r->start, &r->start_cap, iv->n) != 0)
        return -1;
    memset(r->start, 0, iv->n);
    for (size_t k = 1, m = 0; k < nb; k++) {
        while (m < iv->n && iv->v[m].addr < b[k].start)
            m++;
        if (m < iv->n)
            r->start[m] = BLOCK_START | ((b[k].flags & CFG_BLOCK_BRANCH_TARGET)
                                             ? BLOCK_ENTRY : 0);
    }
    iv->start = r->start;
    return 0;
}

/* Whether a window of the chain b[0..nb) holds the start of a block
 * after its own first instruction. */
static int spans_blocks(const cfg_block *b, size_t nb, const window *win)
{
    uint64_t first = win->w[0].addr, last = win->w[win->count - 1].addr;
    size_t k = BISECT_AFTER(b, nb, start, first); /* the chain's first after it */
    k = k ? k : 1;
    return k < nb && b[k].start <= last;
}

/* Whether the file's byte at `at`, as the last of a jump that shares it,
 * lets the jump reach stubs: below 0x80 (a jump forward), and high
 * enough that the 16 MiB it leaves free reach the first stub hole (before
 * the first trampoline, where it will be), or past the trampolines (by
 * the segment's first estimate of its size) when that comes first. */
static int low_byte(const rewriter *r, uint64_t at)
{
    int64_t off = elf_input_offset(r->in, at, 1);
    uint64_t b = off >= 0 ? r->in->bytes[off] : 0x80;
    size_t k = r->first_hole ? r->first_hole : first_hole_after(r->code.len);
    uint64_t lowest = k * MT_HOLE_PERIOD - MT_HOLE_SIZE;
    lowest = lowest < r->code.cap ? lowest : r->code.cap;
    return b < 0x80 && at + 1 + ((b + 1) << 24) > r->header_vaddr + lowest;
}

/* Whether instruction j, after a window whose jump shares its first
 * byte, keeps that byte below 0x80 when the program runs: left as it is
 * (no site there, and such a byte), or starting a window of its own whose
 * jump has a prefix, its site's or one that only moves it elsewhere (then
 * iv->prefixed names it).  After the chain, a byte below 0x80 is all this
 * can see: a window of the next chain that starts there gets a prefix,
 * and the rest is checked when the jump is written (write_held_jumps). */
static int next_can_share(const rewriter *r, insn_vec *iv, size_t j,
                          const sel_expr *x, uint32_t nx, int depth)
{
    const x86_insn *last = &iv->v[j - 1];
    uint64_t at = last->addr + last->length;
    int low = low_byte(r, at);
    if (j >= iv->n) { /* a site there takes a prefix (rewrite_chain) */
        if (low)
            iv->prefixed = at;
        return low;
    }
    const x86_insn *n = &iv->v[j];
    int site = wanted(r, n, x, nx);
    if (low && !site) { /* a window an earlier start gives it: a prefix */
        iv->prefixed = n->addr;
        return 1;
    }
    if (depth == 8)
        return 0;
    uint64_t was = iv->prefixed;
    iv->prefixed = n->addr;
    int fits;
    size_t e = plan_window(iv, j, &fits);

    if (fits == WINDOW_SHARES && !next_can_share(r, iv, e, x, nx, depth + 1))
        fits = 0;
    iv->prefixed = fits ? n->addr : was;
    return fits != 0;
}

/* The window for the site at instruction i (or the instruction a jump
 * before shares a byte with, iv->prefixed): from i, else from an earlier
 * instruction of the chain, not before `from`; [*start, *end), how its
 * jump fits (WINDOW_*, or *fits 0) and whether it has a prefix. */
static void choose_window(rewriter *r, insn_vec *iv, size_t from, size_t i,
                          const sel_expr *x, uint32_t nx, size_t *start,
                          size_t *end, int *fits, int *prefix)
{
    *start = i;
    *end = plan_window(iv, i, fits);
    if (!*fits && iv->v[i].addr == iv->prefixed && wanted(r, &iv->v[i], x, nx)) {
        iv->prefixed = 0; /* the jump before will do without (an int3) */
        *end = plan_window(iv, i, fits);
    }
    *prefix = iv->v[i].addr == iv->prefixed;
    if (*fits == WINDOW_SHARES && !next_can_share(r, iv, *end, x, nx, 0))
        *fits = 0;
    if (*fits || *prefix)
        return;
    size_t e;
    int f = 0;
    size_t s = plan_earlier(iv, from, i, &e, &f);
    int p = iv->v[s].addr == iv->prefixed;
    if (s < i && (f != WINDOW_SHARES || next_can_share(r, iv, e, x, nx, 0))) {
        *start = s;
        *end = e;
        *fits = f;
        *prefix = p;
        r->rep->moved_back++;
    }
}

/* The instruction j after a window whose jump shares its first byte, if
 * the trampoline can run it too: no site of its own, nor a window (its
 * bytes stay as they are, and whatever enters it runs them; no later
 * window may start there: rewrite_chain), movable, decoded alike, no
 * string operation. */
static const x86_insn *tail_of(const rewriter *r, const insn_vec *iv, size_t j,
                               const sel_expr *x, uint32_t nx)
{
    mt_trap t;
    int ends;
    if (j >= iv->n)
        return NULL;
    const x86_insn *n = &iv->v[j];
    return low_byte(r, n->addr) && !wanted(r, n, x, nx) && movable(n, &ends) &&
                   agreed(iv->em, n) && !string_op(n, &t)
               ? n : NULL;
}

/* Rewrites the chain of blocks from bi that only fall through into each
 * other (one block with --profile, whose counters are per block); a site
 * with no room in its own block takes it from its neighbours.  Returns
 * the number of blocks taken, or 0 on error. */
static size_t rewrite_chain(rewriter *r, size_t bi, insn_list *list)
{
    const cfg_block *b = &r->a->cfg->blocks[bi];
    const analysis_block *ab = &r->a->blocks[bi];
    const sel_expr *x = r->a->exprs + ab->first_expr;
    uint32_t nx = ab->sel.n, selected = ab->sel.selected;
    int profiled = r->opt->profile && nx > 0;
    if (b->flags & CFG_BLOCK_DATA) {
        r->rep->data_code += ab->sel.selected;
        r->rep->blocks += (uint64_t)profiled;
        r->rep->blocks_uncounted += (uint64_t)profiled;
        return 1;
    }
    size_t nb = 1;
    while (!r->opt->profile && falls_through_only(r, bi + nb - 1)) {
        nx += r->a->blocks[bi + nb].sel.n;
        selected += r->a->blocks[bi + nb].sel.selected;
        nb++;
    }
    list->v.n = 0;
    for (size_t k = 0; k < nb; k++)
        if (analysis_block_insns(r->a, b + k, collect, list) != 0 || list->oom)
            return 0;
    if (r->planning) /* liveness_solve need not decode them again */
        liveness_note(&r->lv, bi, nb, list->v.v, list->v.n);
    insn_vec view = { list->v.v, list->v.n, NULL,
                      padding_after(r, bi + nb - 1), r->em, r->in,
                      r->prefixed };
    if (nb > 1 && mark_starts(r, b, nb, &view) != 0)
        return 0;
    const insn_vec *iv = &view;
    if (!selected && !profiled && nothing_wanted(r, iv))
        return !r->planning && note_kept_branches(r, iv->v, 0, iv->n) != 0
                   ? 0 : nb;
    if (compute_liveness(r, iv) != 0 || plan_elision(r, iv, x, nx) != 0)
        return 0;
    int64_t block = -1;
    if (profiled && !r->planning) {
        if (r->nblocks == r->max_blocks)
            return 0;
        block = r->nblocks;
        r->blocks[r->nblocks++] = b->start;
        r->rep->blocks++;
    }
    size_t kept = 0; /* instructions before it keep their bytes */
    for (size_t i = 0, from = 0; i < iv->n;) {
        /* a window for the jump before that shares this first byte */
        int forced = iv->v[i].addr == iv->prefixed && !low_byte(r, iv->v[i].addr);
        if (!forced && !wanted(r, &iv->v[i], x, nx)) {
            i++;
            continue;
        }
        int fits = 0, prefix = 0;
        size_t start = i, j = i + 1;
        if (!r->opt->trap_all)
            choose_window(r, &view, from, i, x, nx, &start, &j, &fits, &prefix);
        if (!fits && forced && !wanted(r, &iv->v[i], x, nx)) {
            i++; /* to be moved for the jump before it, which it cannot be */
            continue;
        }
        if (fits == WINDOW_JUMP) { /* one sharing a byte stays short */
            size_t longer = extend_window(r, iv, x, nx, j);
            r->rep->extended += longer > j;
            j = longer;
        }
        /* when no jump fits from i or before, none fits from a later
         * start in [i, j) either: each of them is trapped alone */
        window win = { iv->v + start, r->live + start,
                       iv->start ? iv->start + start : NULL, j - start, 0, fits,
                       fits && prefix,
                       fits == WINDOW_SHARES ? tail_of(r, iv, j, x, nx) : NULL };
        if (r->planning && fits) {
            if (plan_entries(r, &win) != 0)
                return 0;
        } else if ((fits ? emit_window(r, &win, x, nx, &block)
                         : trap_each(r, iv, i, j, x, nx, &block)) != 0) {
            return 0;
        }
        if (fits && !r->planning) {
            r->rep->shorts_moved += shorts_in(r, &win);
            if (note_kept_branches(r, iv->v, kept, start) != 0)
                return 0;
            kept = j;
            r->rep->spanning += spans_blocks(b, nb, &win);
        }
        i = from = j + (win.tail != NULL);
    }
    r->prefixed = view.prefixed; /* for the chain after, if it starts there */
    if (!r->planning)
        set_dues(r, nx);
    if (block >= 0 && count_alone(r, iv, &block) != 0)
        return 0;
    return !r->planning && note_kept_branches(r, iv->v, kept, iv->n) != 0
               ? 0 : nb;
}

/* The int3 site at pc (not a string operation's, whose handler records
 * it), or NULL: traps are sorted by pc. */
static mt_trap *site_trap(const rewriter *r, uint64_t pc)
{
    mt_trap *t = r->traps.v;
    size_t i = BISECT_AFTER(t, r->traps.n, pc, pc);
    return i > 0 && t[i - 1].pc == pc && !t[i - 1].string ? &t[i - 1] : NULL;
}

/* Whether a short branch ending at next reaches a jump at `at`. */
static int reaches(uint64_t next, uint64_t at)
{
    int64_t d = (int64_t)(at - next);
    return d >= -128 && d <= 127;
}

/* An island for a short branch ending at next, to t's trampoline: one
 * made before for the same place, or a new one in padding it reaches.
 * Its address, or 0. */
static uint64_t island_for(rewriter *r, uint64_t next, const mt_trap *t)
{
    const island *is = r->islands.v;
    for (size_t k = 0; k < r->islands.n; k++)
        if (is[k].target == t->pc && reaches(next, is[k].at))
            return is[k].at;
    pad_region *p = r->pads.v;
    size_t k = BISECT_AFTER(p, r->pads.n, at, next + 127);
    for (; k-- > 0 && p[k].end >= next - 128 + JMP_LEN;) {
        int64_t off = elf_input_offset(r->in, p[k].at, JMP_LEN);
        if (p[k].end - p[k].at < JMP_LEN || !reaches(next, p[k].at) || off < 0 ||
            entry_map_any(r->em, p[k].at, p[k].at + JMP_LEN))
            continue;
        island *n = vec_push(&r->islands);
        if (!n)
            return 0;
        n->at = p[k].at;
        n->target = t->pc;
        n->tramp = t->tramp;
        memcpy(n->was, r->in->bytes + off, JMP_LEN);
        encode_patch_jump(elf_input_patch(r->in, (size_t)off, JMP_LEN), n->at,
                          t->tramp);
        p[k].at += JMP_LEN;
        r->rep->islands++;
        return n->at;
    }
    return 0;
}

/* A short branch to t's place, sent through an island. */
static void redirect_short(rewriter *r, branch_ref *b, const mt_trap *t)
{
    int64_t off = elf_input_offset(r->in, b->field, 1);
    uint64_t at = off < 0 ? 0 : island_for(r, b->next, t);
    if (!at)
        return;
    *elf_input_patch(r->in, (size_t)off, 1) = (uint8_t)(int8_t)(at - b->next);
    b->sent = t->tramp;
    r->rep->redirected++;
}

/* Writes a branch's displacement field (in the file or a trampoline):
 * rel8 when it is a short branch left in the file, else rel32. */
static void set_displacement(rewriter *r, const branch_ref *b, uint64_t to)
{
    if (b->next) {
        int64_t off = elf_input_offset(r->in, b->field, 1);
        if (off >= 0)
            *elf_input_patch(r->in, (size_t)off, 1) = (uint8_t)(int8_t)(to - b->next);
        return;
    }
    int32_t d = (int32_t)(to - (b->field + 4));
    if (b->field >= r->code.base) {
        memcpy(r->code.p + (b->field - r->code.base), &d, 4);
    } else {
        int64_t off = elf_input_offset(r->in, b->field, 4);
        if (off >= 0)
            memcpy(elf_input_patch(r->in, (size_t)off, 4), &d, 4);
    }
}

/* Whether the int3 place at pc still goes to trampoline tramp. */
static int place_goes_to(const rewriter *r, uint64_t pc, uint64_t tramp)
{
    const mt_trap *t = site_trap(r, pc);
    return t && t->tramp == tramp;
}

/* Branches redirect_branches sent to a place whose window write_held_jumps
 * then left as it was (moved only for the jump before it, and no stub for
 * its jump: its traps dropped) go to their targets again, and the islands
 * that led there are padding again: the copy runs what it says, which the
 * verifier checks (chromium's copy had 23 such branches, and was refused). */
static void undo_dead_redirects(rewriter *r)
{
    branch_ref *b = r->branches.v;
    for (size_t i = 0; i < r->branches.n; i++)
        if (b[i].sent && !place_goes_to(r, b[i].target, b[i].sent)) {
            set_displacement(r, &b[i], b[i].target);
            b[i].sent = 0;
            r->rep->redirected--;
        }
    island *is = r->islands.v;
    size_t live = 0;
    for (size_t k = 0; k < r->islands.n; k++) {
        int64_t off = elf_input_offset(r->in, is[k].at, JMP_LEN);
        if (place_goes_to(r, is[k].target, is[k].tramp) || off < 0) {
            is[live++] = is[k];
            continue;
        }
        memcpy(elf_input_patch(r->in, (size_t)off, JMP_LEN), is[k].was, JMP_LEN);
        r->rep->islands--;
    }
    r->islands.n = live; /* (islands_for_places finds only live ones) */
}

/* Sends every noted direct branch to an int3 site straight to its
 * trampoline (a short one through an island): the int3 stays for the ways
 * in no branch shows (falling through, indirect jumps, a short branch no
 * island reaches), which then cost a signal. */
static void redirect_branches(rewriter *r)
{
    branch_ref *b = r->branches.v;
    for (size_t i = 0; i < r->branches.n; i++) {
        const mt_trap *t = site_trap(r, b[i].target);
        if (t && b[i].next) {
            redirect_short(r, &b[i], t);
            continue;
        }
        int64_t rel = t ? (int64_t)(t->tramp - (b[i].field + 4)) : 0;
        if (!t || rel != (int32_t)rel ||
            (b[i].field < r->code.base && elf_input_offset(r->in, b[i].field, 4) < 0))
            continue;
        set_displacement(r, &b[i], t->tramp);
        b[i].sent = t->tramp;
        r->rep->redirected++;
    }
}

/* Every chain of blocks, in address order: 0 or -1. */
static int rewrite_chains(rewriter *r)
{
    r->prefixed = 0;
    insn_list list = { { NULL, 0, 0, sizeof(x86_insn) }, 0 };
    int rc = 0;
    for (size_t bi = 0, n; bi < r->a->cfg->nblocks && !rc; bi += n) {
        n = rewrite_chain(r, bi, &list);
        rc = n == 0 ? -1 : 0;
    }
    free(list.v.v);
    return rc;
}

static int u64_order(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static int trap_order(const void *a, const void *b)
{
    uint64_t x = ((const mt_trap *)a)->pc, y = ((const mt_trap *)b)->pc;
    return (x > y) - (x < y);
}

/* The segment: header, site table, block table, the flush and counters
 * slots, the stubs, the trampolines, the trap and check tables, the site
 * table compressed. */
#define MAX_STUB_LOADS 256    /* PT_LOADs of stubs, at most (a kernel
                                 reads 64 KiB of program headers) */

/* Where the segment's tables end at most: the code so far, then the
 * traps (a held jump may add one), checks, sites and their records
 * (run()). */
static uint64_t segment_bound(const rewriter *r)
{
    return r->header_vaddr + align_up(r->code.len, 8) +
           (r->traps.n + r->held.n) * sizeof(mt_trap) +
           r->checks.n * sizeof(mt_check) + sites_z_bound(r) + r->nsites + 16 +
           elf_input_phdrs_size(r->in, MAX_STUB_LOADS + 1) + 16;
}

/* Whether an int3 the runtime writes is at pc: a trap of the table as
 * it was sorted (n of them), or a held jump's that no stub served. */
static int trap_at(const rewriter *r, size_t n, uint64_t pc)
{
    const mt_trap *t = r->traps.v;
    const held_jump *h = r->held.v;
    size_t i = BISECT_AFTER(t, n, pc, pc), k = BISECT_AFTER(h, r->held.n, at, pc);
    return (i > 0 && t[i - 1].pc == pc && t[i - 1].tramp) ||
           (k > 0 && h[k - 1].at == pc && h[k - 1].trapped);
}

static int held_order(const void *a, const void *b)
{
    uint64_t x = ((const held_jump *)a)->at, y = ((const held_jump *)b)->at;
    return x < y ? -1 : x > y;
}

/* Writes the held jumps (emit_window), each to a stub whose distance
 * carries its fixed bytes; a jump that shares its last byte needs that
 * byte to stay what it is when the program runs (no window's jump or
 * int3 goes there).  A window no stub serves is entered through int3s:
 * at its start, and at the instruction starts under its jump, whose traps
 * are registered.  After every other byte of the file is written. */
static int write_held_jumps(rewriter *r, stub_space *st)
{
    if (r->held.n)
        qsort(r->held.v, r->held.n, sizeof(held_jump), held_order);
    held_jump *v = r->held.v;
    size_t sorted = r->traps.n;
    for (size_t i = r->held.n; i-- > 0;) { /* down: stubs pack (stubs.h) */
        held_jump *h = &v[i];
        uint32_t mask = h->mask, value = h->value;
        size_t n = JMP_LEN + (size_t)h->prefix;
        int64_t off = elf_input_offset(r->in, h->at, n);
        int ok = off >= 0;
        if (ok && h->shares) { /* the jumps after it are written */
            uint8_t b = r->in->bytes[off + (int64_t)n - 1];
            ok = b < 0x80 && !trap_at(r, sorted, h->at + n - 1);
            mask |= 0xffu << 24;
            value |= (uint32_t)b << 24;
            n--;
        }
        uint64_t t;
        if (ok && !r->opt->stubless &&
            stub_take(st, h->at + (uint64_t)h->prefix, mask, value, h->tramp, &t) == 0) {
            write_jump(r, h, (size_t)off, t, n);
            r->rep->stubs++;
            r->rep->hole_stubs += t < st->floor;
            continue;
        }
        r->rep->windows--;
        r->rep->stubless++;
        if (!h->sites && h->prefix) {
            drop_inner_traps(r, h, sorted);
            continue;
        }
        if (add_trap(r, h->at, h->tramp, NULL) != 0)
            return -1;
        h->trapped = 1;
        r->rep->traps++;
        r->rep->trapped += h->sites;
    }
    mt_trap *t = r->traps.v;
    size_t live = 0;
    for (size_t i = 0; i < r->traps.n; i++)
        if (t[i].tramp)
            t[live++] = t[i];
    r->traps.n = live;
    if (r->traps.n)
        qsort(r->traps.v, r->traps.n, sizeof(mt_trap), trap_order);
    return 0;
}

/* An int3 place at a window's start whose instruction has 2 bytes or
 * more, and a 5-byte island in padding within a short jump's reach:
 * entered by a short jump there (no signal), which the island sends to
 * the trampoline; the runtime leaves its bytes (mt_trap.jumped).  Nothing
 * shares its first byte: a jump that would have was refused (trap_at).
 * After write_held_jumps, with the traps sorted. */
static int islands_for_places(rewriter *r)
{
    const uint64_t *pc = r->placed.v;
    for (size_t i = 0; i < r->placed.n; i++) {
        mt_trap *t = site_trap(r, pc[i]);
        int64_t off = elf_input_offset(r->in, pc[i], 2);
        if (!t || off < 0)
            continue;
        uint64_t at = island_for(r, pc[i] + 2, t);
        if (!at)
            continue;
        uint8_t *b = elf_input_patch(r->in, (size_t)off, 2);
        b[0] = 0xeb;
        b[1] = (uint8_t)(int8_t)(at - (pc[i] + 2));
        t->jumped = 1;
        r->rep->traps--;
        r->rep->places_jumped++;
    }
    return 0;
}

/* A page of stubs (stub_pages). */
typedef struct stub_page_copy {
    uint64_t vaddr;
    uint8_t bytes[PAGE];
} stub_page_copy;

/* Where stub_pages' pages go: a hole's into the segment, the others
 * into pages, laid out after it (lay_out_stubs). */
typedef struct stub_out {
    rewriter *r;
    uint64_t floor;
    vec pages;                /* stub_page_copy */
} stub_out;

static int stub_page_out(uint64_t page, const uint8_t *bytes, void *arg)
{
    stub_out *so = arg;
    if (page < so->floor) { /* a hole's: holes are whole pages */
        memcpy(so->r->code.p + (page - so->r->code.base), bytes, PAGE);
        return 0;
    }
    stub_page_copy *o = vec_push(&so->pages);
    if (!o)
        return -1;
    o->vaddr = page;
    memcpy(o->bytes, bytes, PAGE);
    return 0;
}

/* The stubs' pages laid out after the segment, from file offset tail_at:
 * runs of pages, each a PT_LOAD (added; *nadded of them), runs closer
 * than the gap that keeps them at MAX_STUB_LOADS joined by pages of
 * int3.  The bytes in *tail (*tail_len).  0, or -1 without memory. */
static int lay_out_stubs(const stub_page_copy *pg, size_t n, uint64_t tail_at,
                         uint8_t **tail, size_t *tail_len, added_load *added,
                         size_t *nadded)
{
    uint64_t *gaps = malloc((n + 1) * sizeof *gaps), join = 1;
    if (!gaps)
        return -1;
    size_t ngaps = 0;
    for (size_t i = 1; i < n; i++)
        gaps[ngaps++] = (pg[i].vaddr - pg[i - 1].vaddr) / PAGE;
    if (ngaps >= MAX_STUB_LOADS) { /* the largest gaps stay gaps */
        qsort(gaps, ngaps, sizeof *gaps, u64_order);
        join = gaps[ngaps - MAX_STUB_LOADS];
    }
    free(gaps);
    size_t len = 0;
    for (size_t i = 0; i < n; i++)
        len += i && (pg[i].vaddr - pg[i - 1].vaddr) / PAGE <= join
                   ? pg[i].vaddr - pg[i - 1].vaddr : PAGE;
    *tail = malloc(len ? len : 1);
    if (!*tail)
        return -1;
    memset(*tail, 0xcc, len);
    size_t at = 0, k = 0;
    for (size_t i = 0; i < n; i++) {
        if (i && (pg[i].vaddr - pg[i - 1].vaddr) / PAGE <= join) {
            at += pg[i].vaddr - pg[i - 1].vaddr - PAGE;
            added[k - 1].size = pg[i].vaddr + PAGE - added[k - 1].vaddr;
        } else {
            added[k++] = (added_load){ tail_at + at, pg[i].vaddr, PAGE };
        }
        memcpy(*tail + at, pg[i].bytes, PAGE);
        at += PAGE;
    }
    *tail_len = len;
    *nadded = k;
    return 0;
}

/* Lays out the segment's tables, header and program header table, and
 * writes the copy: the segment after the input, the stubs' pages after
 * it, each run of them a PT_LOAD of its own. */
static int write_segment(rewriter *r, mt_rewrite_header *hp, const char *out,
                         const char *in_path, uint64_t source_id,
                         const stub_page_copy *pages, size_t npages, char *err,
                         size_t cap)
{
    mt_rewrite_header h = *hp;
    rewrite_report *rep = r->rep;
    uint64_t off = align_up(r->in->size, PAGE);
    r->code.len = align_up(r->code.len, 8);
    if (append_table(&r->code, &r->traps, &h.traps) ||
        append_table(&r->code, &r->checks, &h.checks))
        return rewrite_fail(err, cap, "cannot encode a trampoline (out of room)");
    if (append_sites_z(r, &h) != 0 || append_site_records(r, &h) != 0)
        return rewrite_fail(err, cap, "out of memory");
    added_load *added = calloc(npages + 1, sizeof *added);
    uint8_t *tail = NULL;
    size_t nadded = 0, tail_len = 0;
    /* the stubs' file offset waits for the segment's size, which holds
     * the program header table: their runs' number first */
    if (!added || lay_out_stubs(pages, npages, 0, &tail, &tail_len, added + 1,
                                &nadded) != 0) {
        free(added);
        return rewrite_fail(err, cap, "out of memory");
    }
    size_t ph_at = align_up(r->code.len, 8);
    size_t ph_size = elf_input_phdrs_size(r->in, nadded + 1);
    int rc = 0;
    if (reserve_code(r, ph_at - r->code.len + ph_size) != 0)
        rc = rewrite_fail(err, cap, "out of memory");
    else
        r->code.len = ph_at + ph_size;

    memcpy(h.magic, MT_REWRITE_MAGIC, sizeof h.magic);
    h.version = MT_REWRITE_VERSION;
    h.mode = (uint32_t)r->opt->mode;
    h.nsites = r->nsites;
    h.first_hole = (uint16_t)r->first_hole;
    h.nholes = (uint16_t)r->holes.n;
    rep->holes = r->holes.n;
    h.nblocks = r->nblocks;
    h.ntraps = (uint32_t)r->traps.n;
    h.nchecks = (uint32_t)r->checks.n;
    _Static_assert(BYPASS_RULES <= sizeof h.bypassed / sizeof *h.bypassed,
                   "bypass rules");
    h.nbypass = BYPASS_RULES;
    memcpy(h.bypassed, rep->bypass, sizeof rep->bypass);
    h.segment_vaddr = r->header_vaddr;
    h.segment_size = align_up(r->code.len, 16);
    h.omega = r->opt->params.omega;
    h.chunk = r->opt->params.chunk;
    h.static_ma = rep->ma;
    h.static_aia = rep->aia;
    h.source_id = source_id;
    rep->segment_vaddr = r->header_vaddr;
    rep->segment_bytes = h.segment_size;
    uint64_t tail_at = align_up(off + h.segment_size, PAGE);
    added[0] = (added_load){ off, r->header_vaddr, h.segment_size };
    for (size_t i = 1; i <= nadded; i++)
        added[i].off += tail_at;
    if (!rc && npages && r->header_vaddr + h.segment_size > pages[0].vaddr)
        rc = rewrite_fail(err, cap, "the segment's tables overran its stubs");
    if (!rc && elf_input_phdrs(r->in, added, nadded + 1, off + ph_at,
                               r->header_vaddr + ph_at, r->code.p + ph_at) != 0)
        rc = rewrite_fail(err, cap, "unusual program header table");
    if (!rc) {
        memcpy(r->code.p, &h, sizeof h);
        rc = elf_input_write(out, in_path, r->in, r->code.p, h.segment_size, off,
                             tail, tail_len, tail_at, err, cap);
    }
    free(added);
    free(tail);
    return rc;
}

static int run(rewriter *r, const char *out, const char *in_path,
               uint64_t source_id, char *err, size_t cap)
{
    analysis *a = r->a;
    rewrite_report *rep = r->rep;
    rep->insns = a->total.insns;
    rep->copied = a->img->copied.end - a->img->copied.start;
    rep->mem_insns = a->total.mem_insns;
    rep->exprs = a->total.n;
    rep->selected = a->total.selected;
    memcpy(rep->bypass, a->total.bypass, sizeof rep->bypass);
    rep->ma = a->total.n ? (double)a->total.ma_num / (double)a->total.n : 1.0;
    rep->aia = a->total.n ? (double)a->total.aia_num / (double)a->total.n : 1.0;

    r->header_vaddr = align_up(r->in->load_end, PAGE) + PAGE;
    r->max_sites = (uint32_t)a->total.selected;
    if (r->max_sites >= (1u << MT_SITE_BITS))
        return rewrite_fail(err, cap, "%u operands selected: more than a module can "
                              "log (%u)", r->max_sites, 1u << MT_SITE_BITS);
    r->max_blocks = r->opt->profile ? (uint32_t)a->total.blocks_with_mem : 0;
    mt_rewrite_header h;
    memset(&h, 0, sizeof h);
    size_t at = sizeof h;
    h.sites = at;
    at += (size_t)r->max_sites * sizeof(mt_site);
    h.blocks = at;
    at += (size_t)r->max_blocks * sizeof(uint64_t);
    h.flush_slot = at;
    h.counters_slot = at + 8;
    h.cursor_slot = at + 16;
    h.tag_slot = at + 24;
    uint64_t start_slot = r->header_vaddr + at + 32;
    at = align_up(at + 40, 64);
    r->code.cap = at + 4096 + (size_t)a->total.selected * 200 +
                  (size_t)r->max_blocks * 64 + (size_t)a->total.insns / 4;
    r->code.p = calloc(1, r->code.cap);
    r->code.base = r->header_vaddr;
    if (!r->code.p)
        return rewrite_fail(err, cap, "out of memory");
    r->sites = (mt_site *)(void *)(r->code.p + h.sites);
    r->blocks = (uint64_t *)(void *)(r->code.p + h.blocks);
    r->code.len = at;
    if (emit_stub(&r->code, r->header_vaddr, r->header_vaddr + h.flush_slot,
                  &h) != 0 ||
        emit_count_stub(&r->code, r->header_vaddr,
                        r->header_vaddr + h.counters_slot, &h) != 0)
        return rewrite_fail(err, cap, "cannot encode the stubs");
    uint64_t init;
    int64_t init_at = elf_input_dt_init(r->in, &init);
    if (init_at >= 0) { /* the loader runs the start stub instead */
        if (emit_start_stub(&r->code, r->header_vaddr, start_slot, init, &h) != 0)
            return rewrite_fail(err, cap, "cannot encode the start stub");
        uint64_t start = r->header_vaddr + h.start_stub;
        memcpy(elf_input_patch(r->in, (size_t)init_at, 8), &start, 8);
    }
    r->log.stub = r->header_vaddr + h.stub;
    r->log.cursor_slot = r->header_vaddr + h.cursor_slot;
    r->log.tag_slot = r->header_vaddr + h.tag_slot;
    if (log_template_init(&r->log.seq) != 0)
        return rewrite_fail(err, cap, "cannot encode the log sequence");
    h.log = r->log.seq.shape;
    r->count_stub_addr = r->header_vaddr + h.count_stub;

    int rc = 0;
    if (!r->opt->trap_all) { /* first pass: the int3 places */
        rewrite_report counted = *rep;
        r->planning = 1;
        rc = rewrite_chains(r);
        r->planning = 0;
        *rep = counted;
        if (r->places.n)
            qsort(r->places.v, r->places.n, sizeof(uint64_t), u64_order);
    }
    if (!rc && liveness_solve(&r->lv, r->a) != 0)
        return rewrite_fail(err, cap, "cannot decode the file again");
    if (rc || rewrite_chains(r))
        return rewrite_fail(err, cap, "cannot encode a trampoline%s",
                    r->code.failed ? " (out of room or unencodable)" : "");

    if (r->traps.n)
        qsort(r->traps.v, r->traps.n, sizeof(mt_trap), trap_order);
    if (!r->opt->trap_all) {
        if (find_pads(r) != 0)
            return rewrite_fail(err, cap, "out of memory");
        redirect_branches(r);
    }
    stub_space st;
    stub_out so = { r, align_up(segment_bound(r), PAGE) + PAGE,
                    { NULL, 0, 0, sizeof(stub_page_copy) } };
    stub_space_init(&st, so.floor, r->holes.v, r->holes.n);
    rc = write_held_jumps(r, &st) != 0;
    if (!rc)
        undo_dead_redirects(r);
    rc = rc || islands_for_places(r) != 0 || stub_pages(&st, stub_page_out, &so) != 0;
    stub_space_free(&st);
    if (rc) {
        free(so.pages.v);
        return rewrite_fail(err, cap, "out of memory");
    }
    rc = write_segment(r, &h, out, in_path, source_id, so.pages.v, so.pages.n, err, cap);
    free(so.pages.v);
    return rc;
}

/* A file whose code and data the decoder cannot tell apart is refused:
 * where the linear sweep and the graph disagree on more than one
 * instruction in twenty (GHC's tables next to code: shellcheck, 14 %;
 * OpenSSL's tables in libcrypto, 1.05 %, which the analysis knows as
 * data; compilers' code: none to a few in a file), a window would be written
 * across instructions the program runs, and the verifier, which sweeps
 * too, would not see it. */
#define INTERLEAVED_PER_MILLE 50
static int interleaved(const analysis *a, const entry_map *em, char *err,
                       size_t cap)
{
    uint64_t insns = a->total.insns;
    if (em->disagree < 1000 ||
        em->disagree * 1000 <= insns * INTERLEAVED_PER_MILLE)
        return 0;
    return rewrite_fail(err, cap, "its code and data are interleaved where "
                        "the decoder cannot tell them apart (%" PRIu64 " of %"
                        PRIu64 " instructions decode two ways, as in GHC's "
                        "tables next to code)", (uint64_t)em->disagree, insns);
}

int rewrite_too_slow(const rewrite_report *rep, char *why, size_t cap)
{
    uint64_t windows = rep->stubs + rep->stubless;
    if (rep->stubless <= REWRITE_STUBLESS_MAX || rep->stubless * 4 <= windows)
        return 0;
    snprintf(why, cap, "%" PRIu64 " of its %" PRIu64 " windows no stub could serve would "
             "go through int3, microseconds each (a file this big runs out of stub "
             "room): too slow to run", rep->stubless, windows);
    return 1;
}

int rewrite_file(const char *in_path, const char *out, const rewrite_options *o,
                 rewrite_report *rep, char *err, size_t cap)
{
    memset(rep, 0, sizeof *rep);
    if (strcmp(in_path, out) == 0 || rewrite_same_file(in_path, out))
        return rewrite_fail(err, cap, "the output would overwrite the input");
    elf_input in = { .fd = -1 };
    rewriter r;
    memset(&r, 0, sizeof r);
    r.traps.elem = sizeof(mt_trap);
    r.checks.elem = sizeof(mt_check);
    r.branches.elem = sizeof(branch_ref);
    r.places.elem = sizeof(uint64_t);
    r.pads_used.elem = sizeof(pad_region);
    r.pads.elem = sizeof(pad_region);
    r.islands.elem = sizeof(island);
    r.held.elem = sizeof(held_jump);
    r.placed.elem = sizeof(uint64_t);
    r.holes.elem = sizeof(stub_hole);
    if (x86_decoder_init(&r.dec) != 0)
        return rewrite_fail(err, cap, "cannot set up the x86 decoder");
    uint64_t id = 0;
    int rc = elf_input_map(in_path, &in, err, cap);
    if (!rc)
        rc = elf_input_check(&in, 1, err, cap);
    if (!rc && elf_input_rewritten(&in))
        rc = rewrite_fail(err, cap, "already rewritten by memtap (rewrite the "
                            "original instead)");
    if (!rc && elf_input_id(&in, &id) != 0)
        rc = rewrite_fail(err, cap, "cannot read the file: %s", strerror(errno));
    if (!rc) {
        int st = analysis_run(in_path, &o->params, &r.a);
        if (st != 0)
            rc = rewrite_fail(err, cap, "%s", elf_strerror(st));
        else if (liveness_init(&r.lv, r.a->cfg) != 0 ||
                 entry_map_build(r.a->cfg, &r.em) != 0)
            rc = rewrite_fail(err, cap, "out of memory");
        else {
            rep->entry_points = r.em->entries;
            rep->sweep_disagree = r.em->disagree;
            rc = interleaved(r.a, r.em, err, cap);
        }
    }
    if (!rc) {
        r.opt = o;
        r.in = &in;
        r.rep = rep;
        rc = run(&r, out, in_path, id, err, cap);
    }
    free(r.code.p);
    free(r.traps.v);
    free(r.checks.v);
    free(r.branches.v);
    free(r.places.v);
    free(r.pads_used.v);
    free(r.pads.v);
    free(r.islands.v);
    free(r.held.v);
    free(r.placed.v);
    free(r.holes.v);
    liveness_free(&r.lv);
    entry_map_free(r.em);
    free(r.live);
    free(r.start);
    free(r.plan);
    analysis_free(r.a);
    elf_input_unmap(&in);
    return rc;
}

int rewrite_source_id(const char *path, uint64_t *id)
{
    elf_input in = { .fd = -1 };
    char err[256];
    mt_rewrite_header h;
    int rc = elf_input_map(path, &in, err, sizeof err);
    if (rc == 0) {
        if (elf_input_header(&in, &h) == 0)
            *id = h.source_id;
        else
            rc = elf_input_id(&in, id);
    }
    elf_input_unmap(&in);
    return rc;
}

/* The GNU build-id of the file at path into id (room for 64); its length,
 * 0 when it has none, -1 when the file is not one memtap reads. */
static int file_build_id(const char *path, uint8_t *id)
{
    elf_file f;
    if (elf_file_open(path, &f) != ELF_OK)
        return -1;
    int n = (int)f.build_id_len;
    memcpy(id, f.build_id, f.build_id_len);
    elf_file_close(&f);
    return n;
}

int rewrite_is_copy_of(const char *orig, const char *copy)
{
    mt_rewrite_header h;
    uint8_t a[64], b[64];
    if (rewrite_read_header(copy, &h) != 0)
        return 0;
    int na = file_build_id(orig, a), nb = file_build_id(copy, b);
    if (na < 0 || nb < 0)
        return -1;
    if (na || nb)
        return na == nb && memcmp(a, b, (size_t)na) == 0;
    uint64_t id;
    if (rewrite_source_id(orig, &id) != 0)
        return -1;
    return id == h.source_id;
}

int rewrite_read_header(const char *path, mt_rewrite_header *h)
{
    elf_input in = { .fd = -1 };
    char err[256];
    int rc = elf_input_map(path, &in, err, sizeof err);
    if (rc == 0)
        rc = elf_input_header(&in, h);
    elf_input_unmap(&in);
    return rc;
}
