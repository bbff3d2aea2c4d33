/*
 * cfg.c - recursive disassembly of each function, jump-table recognition
 * (the GCC/Clang patterns: `jmp *T(,%r,8)`, `mov T(,%r,8),%r; jmp *%r`, and
 * `lea T(%rip),%b; movslq (%b,%r,4),%x; add %b,%x; jmp *%x`, also with
 * `mov ...,%eax; cltq` at -O0, bounded by a preceding `cmp $N; ja`), gap
 * scanning (what it decodes from a table code takes the address of is
 * marked a gap's, never to be rewritten), and block formation.
 *
 * One file: the passes share the work list and the block table, and none
 * is long on its own.
 */
#include "analysis/cfg.h"

#include <stdlib.h>
#include <string.h>

#include "sys/bisect.h"
#include "sys/vec.h"
#include "x86/insn.h"

enum { M_NONE = 0, M_START, M_INSIDE, M_DATA, M_PAD,
       M_OBJECT /* a data object's bytes (image.h): never decoded */ };
/* What scan_gaps made of an instruction it decoded (walker.gap). */
enum { G_NONE = 0, G_NOW, G_CODE, G_DATA };

#define RING 16
#define MAX_TABLE 4096

/* A jump table whose bound its run did not show. */
typedef struct deferred_table {
    uint64_t run, table;     /* the run's first instruction, the table */
    int rel;
} deferred_table;

/* Per-function state, reused across functions. */
typedef struct walker {
    const code_image *img;
    x86_decoder dec;
    uint64_t start, end;
    uint8_t *mark, *len, *flow, *leader;
    uint8_t *gap;            /* G_*: decoded from a gap's entry */
    uint8_t in_gap;          /* G_NOW while scan_gaps drains */
    uint8_t in_gap_func;     /* the function is code outside any symbol
                                or FDE (FUNC_GAP) */
    uint64_t gap_lo, gap_hi; /* the bytes that drain decoded */
    size_t cap;
    uint64_t *work;
    size_t nwork, workcap;
    x86_insn ring[RING];     /* the current straight-line run (circular) */
    unsigned head, nring;
    cfg_stats *stats;
    vec ptrs;                /* uint64_t: code addresses the data holds and
                                branch targets across functions, sorted */
    int collect;             /* first pass: branches into other functions
                                are gathered into ptrs */
    vec deferred;            /* deferred_table */
    vec data_refs;           /* uint64_t: addresses in code that code takes
                                rip-relative (lea or memory operand), sorted:
                                a table kept among the instructions */
    vec labels;              /* uint64_t: of those, the ones an indirect
                                jump goes to (lea L(%rip),%r; add ...,%r;
                                jmp *%r: glibc's memmove-ssse3), sorted:
                                code, not a table */
    vec calls;               /* uint64_t: direct call targets, sorted:
                                code, where a table ends */
    vec leas;                /* uint64_t: every address code takes with a
                                rip-relative lea, sorted: where a table
                                with no bound found ends (the next one
                                starts there) */
    int oom;
} walker;

static int in_func(const walker *w, uint64_t a)
{
    return a >= w->start && a < w->end;
}

static void add_ptr(walker *w, uint64_t a)
{
    uint64_t *p = vec_push(&w->ptrs);
    if (p)
        *p = a;
    else
        w->oom = 1;
}

static uint64_t next_of(const x86_insn *x) { return x->addr + x->length; }

/* The index of the first of the sorted addresses v at or after x. */
static size_t first_from(const vec *v, uint64_t x)
{
    const uint64_t *a = v->v;
    size_t lo = 0, hi = v->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (a[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int exec_addr(const code_image *img, uint64_t v);

/* Notes the code addresses x takes rip-relative (the collect pass). */
static void note_data_refs(walker *w, const x86_insn *x)
{
    for (uint8_t i = 0; i < x->nvisible; i++) {
        const x86_operand *op = &x->ops[i];
        if (op->type != X86_OPND_MEM || op->base != X86_REG_RIP)
            continue;
        uint64_t t = op->target, *p;
        if (x->op == X86_OP_LEA) {
            if ((p = vec_push(&w->leas)) != NULL)
                *p = t;
            else
                w->oom = 1;
        }
        if (!exec_addr(w->img, t))
            continue;
        p = vec_push(&w->data_refs);
        if (p)
            *p = t;
        else
            w->oom = 1;
    }
}

static int in_sorted(const vec *v, uint64_t a)
{
    size_t i = first_from(v, a);
    return i < v->n && ((const uint64_t *)v->v)[i] == a;
}

static int is_label(const walker *w, uint64_t a)
{
    return in_sorted(&w->labels, a);
}

/* Whether code takes an address inside one of the instructions the last
 * gap drain decoded: then they are a table's bytes, not code. */
static int gap_is_data(const walker *w)
{
    const uint64_t *refs = w->data_refs.v;
    for (size_t i = first_from(&w->data_refs, w->gap_lo);
         i < w->data_refs.n && refs[i] < w->gap_hi; i++) {
        uint64_t a = refs[i];
        if (is_label(w, a))
            continue;
        for (unsigned back = 0; back < 16 && a >= w->start; back++, a--) {
            uint8_t m = w->mark[a - w->start];
            if (m == M_START) {
                if (w->gap[a - w->start] == G_NOW)
                    return 1;
                break;
            }
            if (m != M_INSIDE)
                break;
        }
    }
    return 0;
}

static void push_work(walker *w, uint64_t a, uint8_t why)
{
    if (!in_func(w, a)) { /* a cold part jumping back into its function */
        if (w->collect && why == CFG_BLOCK_BRANCH_TARGET)
            add_ptr(w, a);
        return;
    }
    w->leader[a - w->start] |= why;
    if (w->nwork == w->workcap) {
        size_t cap = w->workcap ? w->workcap * 2 : 256;
        uint64_t *v = realloc(w->work, cap * sizeof *v);
        if (!v) {
            w->oom = 1;
            return;
        }
        w->work = v;
        w->workcap = cap;
    }
    w->work[w->nwork++] = a;
}

/* The i-th instruction of the run, oldest first. */
static const x86_insn *run_at(const walker *w, unsigned i)
{
    return &w->ring[(w->head + i) % RING];
}

static unsigned run_pos(const walker *w, const x86_insn *x)
{
    return ((unsigned)(x - w->ring) + RING - w->head) % RING;
}

/* The latest instruction of the run before position `before` that writes
 * gpr. */
static const x86_insn *writer_of(const walker *w, unsigned before, int gpr)
{
    if (gpr < 0 || gpr >= 16)
        return NULL;
    for (unsigned i = before; i-- > 0;)
        if (run_at(w, i)->writes & (1u << gpr))
            return run_at(w, i);
    return NULL;
}

/* The entry count `cmp $N, ...` then j says (ja: N+1, jae: N), or 0. */
static uint32_t bound_of(const x86_insn *c, const x86_insn *j)
{
    if (j->op != X86_OP_JNBE && j->op != X86_OP_JNB)
        return 0;
    const x86_operand *imm = x86_visible(c, 1);
    if (c->op != X86_OP_CMP || !imm || imm->type != X86_OPND_IMM)
        return 0;
    uint64_t n = (uint64_t)imm->value + (j->op == X86_OP_JNBE);
    return n > 0 && n <= MAX_TABLE ? (uint32_t)n : 0;
}

/* The table's entry count from `cmp $N, ...; ja` (N+1) or `jae` (N) in the
 * run, or 0 when no bound is seen. */
static uint32_t table_bound(const walker *w, unsigned before)
{
    for (unsigned i = before; i-- > 1;) {
        const x86_insn *j = run_at(w, i);
        if (j->op == X86_OP_JNBE || j->op == X86_OP_JNB)
            return bound_of(run_at(w, i - 1), j);
    }
    return 0;
}

static int is_abs_table_mem(const x86_operand *op)
{
    return op && op->type == X86_OPND_MEM && op->base == X86_REG_NONE &&
           op->index != X86_REG_NONE && op->scale == 8 && op->value != 0;
}

/* Whether `ld` loads a 32-bit table entry: `movslq (%b,%r,4),%x`, or
 * (GCC -O0) `mov M,%eax; cltq`, which only counts with a bound. */
static int loads_entry(const walker *w, const x86_insn *ld, x86_reg b,
                       int bounded)
{
    if (ld->op == X86_OP_CDQE) {
        const x86_insn *mov = writer_of(w, run_pos(w, ld), 0);
        const x86_operand *m = mov ? x86_visible(mov, 1) : NULL;
        return bounded && mov && mov->op == X86_OP_MOV && m &&
               m->type == X86_OPND_MEM && m->size == 32;
    }
    const x86_operand *m = x86_visible(ld, 1);
    return ld->op == X86_OP_MOVSXD && m && m->type == X86_OPND_MEM &&
           m->size == 32 && x86_gpr_index(m->base) == x86_gpr_index(b);
}

/* For `add %b,%x` at position ai of the run: the table T of
 * `lea T(%rip),%b`, when %x holds an entry loaded from it. */
static int rel_table(const walker *w, unsigned ai, int bounded,
                     uint64_t *table)
{
    const x86_insn *add = run_at(w, ai);
    const x86_operand *o0 = x86_visible(add, 0), *o1 = x86_visible(add, 1);
    if (!o0 || !o1 || o0->type != X86_OPND_REG || o1->type != X86_OPND_REG)
        return 0;
    for (int k = 0; k < 2; k++) {
        x86_reg x = (k ? o1 : o0)->reg, b = (k ? o0 : o1)->reg;
        const x86_insn *ld = writer_of(w, ai, x86_gpr_index(x));
        const x86_insn *lea = writer_of(w, ai, x86_gpr_index(b));
        const x86_operand *a = lea ? x86_visible(lea, 1) : NULL;
        if (!ld || !lea || lea->op != X86_OP_LEA || !a || a->type != X86_OPND_MEM ||
            a->base != X86_REG_RIP || !loads_entry(w, ld, b, bounded))
            continue;
        *table = lea->addr + lea->length + (uint64_t)a->value;
        return 1;
    }
    return 0;
}

static int decode_at(walker *w, uint64_t a, x86_insn *x);
static int push_table(walker *w, uint64_t table, int rel, uint32_t bound);

/* Pushes the targets of the jump table behind the indirect jump at the end
 * of the run (or defers them until the bound before the run is known);
 * returns whether one was recognised. */
static int jump_table(walker *w)
{
    unsigned ji = w->nring - 1;
    const x86_insn *j = run_at(w, ji);
    const x86_operand *op = x86_visible(j, 0);
    uint64_t table = 0;
    int rel = 0;
    uint32_t bound = table_bound(w, ji);
    if (is_abs_table_mem(op)) {
        table = (uint64_t)op->value;
    } else if (op && op->type == X86_OPND_REG) {
        const x86_insn *wr = writer_of(w, ji, x86_gpr_index(op->reg));
        if (!wr)
            return 0;
        if (wr->op == X86_OP_MOV && is_abs_table_mem(x86_visible(wr, 1)))
            table = (uint64_t)x86_visible(wr, 1)->value;
        else if (wr->op == X86_OP_ADD &&
                 rel_table(w, run_pos(w, wr), bound > 0, &table))
            rel = 1;
        else
            return 0;
    } else {
        return 0;
    }
    if (!bound) { /* the bound may lie before the run: see once it is known */
        deferred_table *d = vec_push(&w->deferred);
        if (!d) {
            w->oom = 1;
            return 0;
        }
        *d = (deferred_table){ run_at(w, 0)->addr, table, rel };
        return 1;
    }
    return push_table(w, table, rel, bound);
}

/* The bound of `cmp $N, ...; ja` (or jae) right before the instruction at
 * a, from the instructions decoded since; 0 when there is none. */
static uint32_t bound_before(walker *w, uint64_t a)
{
    uint64_t at[2] = { 0, 0 };
    for (int k = 0; k < 2; k++) { /* the two instructions before a */
        uint64_t p = a;
        for (uint64_t back = 1; back <= 15 && p - back >= w->start; back++) {
            size_t off = p - back - w->start;
            if (w->mark[off] == M_START && w->len[off] == back) {
                at[k] = p - back;
                break;
            }
        }
        if (!at[k])
            return 0;
        a = at[k];
    }
    x86_insn j, c;
    if (decode_at(w, at[0], &j) || decode_at(w, at[1], &c))
        return 0;
    return bound_of(&c, &j);
}

/* Pushes the targets of the tables whose bound was not in their run, with
 * the bound found before the run now, or unbounded; whether any were. */
static int resolve_deferred(walker *w)
{
    size_t n = w->deferred.n;
    w->deferred.n = 0; /* push_table only pushes work: the entries stay */
    const deferred_table *all = w->deferred.v;
    for (size_t i = 0; i < n; i++)
        if (!push_table(w, all[i].table, all[i].rel,
                        bound_before(w, all[i].run)))
            w->stats->unresolved_ijumps++;
    return n > 0;
}

/* Pushes the targets of a table of `bound` entries (0: until one leaves
 * the function); returns how many. */
static int push_table(walker *w, uint64_t table, int rel, uint32_t bound)
{
    uint32_t limit = bound ? bound : MAX_TABLE, found = 0;
    if (!bound && !w->collect) { /* up to the next address code takes */
        size_t i = first_from(&w->leas, table + 1);
        if (i < w->leas.n) {
            uint64_t room = (((const uint64_t *)w->leas.v)[i] - table) / (rel ? 4 : 8);
            limit = room < limit ? (uint32_t)room : limit;
        }
    }
    for (uint32_t k = 0; k < limit; k++) {
        uint64_t target;
        if (rel) {
            int32_t e;
            if (image_read(w->img, table + 4ull * k, &e, 4))
                break;
            target = table + (uint64_t)(int64_t)e;
        } else if (image_read(w->img, table + 8ull * k, &target, 8)) {
            break;
        }
        if (!in_func(w, target)) {
            if (bound)
                continue;
            break;
        }
        push_work(w, target, CFG_BLOCK_TABLE_TARGET);
        found++;
    }
    if (found) {
        w->stats->jump_tables++;
        w->stats->table_targets += found;
    }
    return found > 0;
}

static int ends_block(uint8_t flow)
{
    return flow != X86_FLOW_NEXT && flow != X86_FLOW_SYSCALL;
}

/* Whether [a, a+n) is free for a new instruction. */
static int free_bytes(const walker *w, uint64_t a, size_t n)
{
    if (a + n > w->end)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (w->mark[a - w->start + i] == M_START ||
            w->mark[a - w->start + i] == M_INSIDE ||
            w->mark[a - w->start + i] == M_OBJECT)
            return 0;
    return 1;
}

/* The instruction at a, whole (flow_only: as x86_decode_flow, what
 * judging bytes no path reached needs). */
static int decode_part(walker *w, uint64_t a, x86_insn *x, int flow_only)
{
    size_t avail;
    const uint8_t *code = image_code(w->img, a, &avail);
    if (!code)
        return -1;
    if (avail > w->end - a)
        avail = w->end - a;
    return flow_only ? x86_decode_flow(&w->dec, code, avail, a, x)
                     : x86_decode(&w->dec, code, avail, a, x);
}

static int decode_at(walker *w, uint64_t a, x86_insn *x)
{
    return decode_part(w, a, x, 0);
}

/* A computed jump `jmp *%r` whose r the run made from `lea L(%rip)`
 * (then added to or offset, as glibc's memmove-ssse3 does): L is code, a
 * label whose address the code takes, not a table (the collect pass). */
static void note_label(walker *w, const x86_insn *j)
{
    const x86_operand *t = &j->ops[0];
    if (t->type != X86_OPND_REG || !w->nring)
        return;
    int gpr = x86_gpr_index(t->reg);
    unsigned before = w->nring - 1; /* the jump is the run's last */
    for (int steps = 0; steps < RING; steps++) {
        const x86_insn *x = writer_of(w, before, gpr);
        if (!x)
            return;
        if (x->op == X86_OP_LEA && x->ops[1].base == X86_REG_RIP) {
            uint64_t *p = vec_push(&w->labels);
            if (p)
                *p = x->ops[1].target;
            else
                w->oom = 1;
            return;
        }
        /* r = r + a (add, sub, lea (r,a)): L may come through a, else
         * through r's value before */
        int other = -1;
        const x86_operand *o1 = &x->ops[1];
        if (x->op == X86_OP_ADD || x->op == X86_OP_SUB)
            other = o1->type == X86_OPND_REG ? x86_gpr_index(o1->reg) : -1;
        else if (x->op == X86_OP_LEA && x86_gpr_index(o1->base) == gpr)
            other = x86_gpr_index(o1->index);
        else if (x->op == X86_OP_LEA && x86_gpr_index(o1->index) == gpr)
            other = x86_gpr_index(o1->base);
        else
            return;
        before = run_pos(w, x);
        const x86_insn *y = other >= 0 ? writer_of(w, before, other) : NULL;
        if (y && y->op == X86_OP_LEA && y->ops[1].base == X86_REG_RIP)
            gpr = other;
    }
}

/* The run's instructions whole (decode_run reads them as x86_decode_flow
 * does, at a fraction of the cost): what the analysis of the computed
 * jump that ends it looks back at. */
static int complete_run(walker *w)
{
    for (unsigned i = 0; i < w->nring; i++) {
        x86_insn *x = &w->ring[(w->head + i) % RING];
        if (decode_at(w, x->addr, x))
            return -1;
    }
    return 0;
}

/* Decodes straight-line code from a until it reaches decoded code, a
 * terminator, or bytes that do not decode. */
static void decode_run(walker *w, uint64_t a)
{
    w->head = w->nring = 0;
    while (in_func(w, a)) {
        uint8_t m = w->mark[a - w->start];
        if (m == M_START)
            return;
        if (m == M_INSIDE) {
            w->stats->overlaps++;
            return;
        }
        if (m == M_OBJECT)
            return;
        if (w->nring == RING) {
            w->head = (w->head + 1) % RING;
            w->nring--;
        }
        x86_insn *x = &w->ring[(w->head + w->nring) % RING];
        if (decode_part(w, a, x, 1)) {
            w->mark[a - w->start] = M_DATA;
            w->stats->undecodable_bytes++;
            return;
        }
        if (!free_bytes(w, a, x->length)) {
            w->stats->overlaps++;
            return;
        }
        w->nring++;
        size_t off = a - w->start;
        w->mark[off] = M_START;
        memset(w->mark + off + 1, M_INSIDE, x->length - 1u);
        w->len[off] = x->length;
        w->flow[off] = x->flow;
        w->gap[off] = w->in_gap;
        if (w->in_gap) {
            w->gap_lo = a < w->gap_lo ? a : w->gap_lo;
            w->gap_hi = next_of(x) > w->gap_hi ? next_of(x) : w->gap_hi;
        }
        /* what a gap's code takes counts only where no symbol or FDE
         * covers it (hand-written code without CFI): inside a function,
         * a gap is as likely bytes that decode by chance */
        if (w->collect && (!w->in_gap || w->in_gap_func))
            note_data_refs(w, x);
        uint64_t next = a + x->length;
        switch (x->flow) {
        case X86_FLOW_JCC:
            push_work(w, x->target, CFG_BLOCK_BRANCH_TARGET);
            break;
        case X86_FLOW_JUMP:
            push_work(w, x->target, CFG_BLOCK_BRANCH_TARGET);
            return;
        case X86_FLOW_IJUMP:
            if (complete_run(w) != 0)
                return;
            if (w->collect && (!w->in_gap || w->in_gap_func))
                note_label(w, x);
            if (x->nmem && x->mem[0].base == X86_REG_RIP)
                w->stats->pointer_jumps++;
            else if (!jump_table(w))
                w->stats->unresolved_ijumps++;
            return;
        case X86_FLOW_RET:
        case X86_FLOW_STOP:
            return;
        case X86_FLOW_CALL:
            if (w->collect && x->target) {
                uint64_t *t = vec_push(&w->calls);
                if (!t)
                    w->oom = 1;
                else
                    *t = x->target;
            }
            break;
        default:
            break;
        }
        a = next;
    }
}

static void drain(walker *w)
{
    do {
        while (w->nwork && !w->oom)
            decode_run(w, w->work[--w->nwork]);
    } while (!w->oom && resolve_deferred(w));
}

/* Whether straight-line decoding from a stays clean until a terminator,
 * known code or the function's end. */
static int plausible_code(walker *w, uint64_t a)
{
    x86_insn x;
    for (int n = 0; n < 100000; n++) {
        if (a == w->end || w->mark[a - w->start] == M_START)
            return n > 0;
        if (decode_part(w, a, &x, 1) || !free_bytes(w, a, x.length))
            return 0;
        if (x.flow == X86_FLOW_JUMP || x.flow == X86_FLOW_IJUMP ||
            x.flow == X86_FLOW_RET || (x.flow == X86_FLOW_STOP && !x.is_padding))
            return 1;
        a += x.length;
    }
    return 0;
}

/* Scans the bytes no path reached: padding is skipped, undecodable bytes
 * are skipped one at a time, and clean runs become code. */
static void scan_gaps(walker *w, const uint8_t *code)
{
    uint64_t a = w->start;
    while (a < w->end && !w->oom) {
        size_t off = a - w->start;
        if (w->mark[off] != M_NONE) {
            a++;
            continue;
        }
        x86_insn x;
        if (code[off] == 0x00) {
            w->mark[off] = M_PAD;
            w->stats->padding_bytes++;
            a++;
        } else if (decode_part(w, a, &x, 1) || !free_bytes(w, a, x.length)) {
            w->mark[off] = M_DATA;
            w->stats->undecodable_bytes++;
            a++;
        } else if (x.is_padding) {
            memset(w->mark + off, M_PAD, x.length);
            w->stats->padding_bytes += x.length;
            a += x.length;
        } else if (plausible_code(w, a)) {
            w->stats->gap_entries++;
            push_work(w, a, CFG_BLOCK_GAP);
            w->in_gap = G_NOW;
            w->gap_lo = a;
            w->gap_hi = a;
            drain(w);
            w->in_gap = G_NONE;
            /* what the drain decoded is code, unless code takes an address
             * among it (bytes of a table: hand-written assembly keeps its
             * tables in .text; patching them would change the data) */
            uint8_t made = gap_is_data(w) ? G_DATA : G_CODE;
            for (uint64_t g = w->gap_lo; g < w->gap_hi; g++)
                if (w->gap[g - w->start] == G_NOW)
                    w->gap[g - w->start] = made;
        } else {
            w->mark[off] = M_DATA;
            w->stats->undecodable_bytes++;
            a++;
        }
    }
}

/* A table runs on from where code takes its address over what the gap
 * scan decoded (pieces of it that decode as code, with undecodable or
 * padding bytes between) up to the function's next code a path reached,
 * or a call leads to (hand-written code after a table, in a stripped
 * file): an AES table's 2 KiB decodes as many short runs, and only its
 * first byte is addressed. */
static void spread_tables(walker *w)
{
    const uint64_t *refs = w->data_refs.v;
    for (size_t i = first_from(&w->data_refs, w->start);
         i < w->data_refs.n && refs[i] < w->end; i++)
        for (uint64_t a = refs[i]; a < w->end && !is_label(w, refs[i]); a++) {
            size_t off = a - w->start;
            if (w->mark[off] == M_START &&
                (w->gap[off] == G_NONE || in_sorted(&w->calls, a)))
                break; /* code a path reached, or a call */
            if (w->mark[off] == M_START)
                w->gap[off] = G_DATA;
        }
}

typedef struct builder {
    vec blocks, addr, len;
} builder;

static int form_blocks(walker *w, builder *b, uint32_t fi, cfg_func *cf)
{
    cf->first_block = (uint32_t)b->blocks.n;
    cfg_block *cur = NULL;
    uint64_t prev_end = 0;
    uint8_t prev_flow = 0;
    int cur_data = 0; /* the current block is a table's bytes */
    for (uint64_t a = w->start; a < w->end; a++) {
        size_t off = a - w->start;
        if (w->mark[off] != M_START)
            continue;
        int data = w->gap[off] == G_DATA;
        if (cur && (w->leader[off] || ends_block(prev_flow) || prev_end != a ||
                    data != cur_data))
            cur = NULL;
        cur_data = data;
        if (!cur) {
            cur = vec_push(&b->blocks);
            if (!cur)
                return -1;
            cur->start = a;
            cur->first_insn = (uint32_t)b->addr.n;
            cur->func = fi;
            cur->flags = w->leader[off] | (data ? CFG_BLOCK_DATA : 0);
            cf->nblocks++;
        }
        uint64_t *pa = vec_push(&b->addr);
        uint8_t *pl = vec_push(&b->len);
        if (!pa || !pl)
            return -1;
        *pa = a;
        *pl = w->len[off];
        cur->ninsn++;
        cur->end = a + w->len[off];
        cur->exit = w->flow[off];
        prev_end = cur->end;
        prev_flow = w->flow[off];
    }
    return 0;
}

static int exec_addr(const code_image *img, uint64_t v)
{
    const image_section *s = image_section_at(img, v);
    return s && s->exec && s->data;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Adds the code addresses the image's data holds: aligned 8-byte words of its
 * other sections (absolute pointers) and the addends of R_X86_64_RELATIVE
 * relocations (position-independent ones).  Label tables of computed
 * gotos (an interpreter's dispatch), function pointers: code may be
 * entered there without any branch the walk sees, so no patch window may
 * span such an address. */
static void code_pointers(walker *w)
{
    const code_image *img = w->img;
    for (size_t i = 0; i < img->nsecs; i++) {
        const image_section *s = &img->secs[i];
        if (s->exec || !s->data)
            continue;
        int rela = s->name && strncmp(s->name, ".rela", 5) == 0;
        size_t step = rela ? 24 : 8, first = rela ? 0 : (8 - s->addr % 8) % 8;
        for (size_t off = first; off + step <= s->size; off += step) {
            uint64_t v;
            if (rela) {
                uint64_t info;
                memcpy(&info, s->data + off + 8, 8);
                if ((uint32_t)info != 8 /* R_X86_64_RELATIVE */)
                    continue;
                memcpy(&v, s->data + off + 16, 8);
            } else {
                memcpy(&v, s->data + off, 8);
            }
            if (exec_addr(img, v))
                add_ptr(w, v);
        }
    }
}

/* Instructions at code addresses the data holds start blocks. */
static void mark_pointed(walker *w)
{
    const uint64_t *ptrs = w->ptrs.v;
    for (size_t i = first_from(&w->ptrs, w->start);
         i < w->ptrs.n && ptrs[i] < w->end; i++)
        if (w->mark[ptrs[i] - w->start] == M_START)
            w->leader[ptrs[i] - w->start] |= CFG_BLOCK_TABLE_TARGET;
}

/* The data objects' bytes in the function's range are never decoded. */
static void mark_objects(walker *w)
{
    const code_image *img = w->img;
    size_t from = BISECT_AFTER(img->objects, img->nobjects, start, w->start);
    for (size_t i = from ? from - 1 : 0; /* the one before may reach in */
         i < img->nobjects && img->objects[i].start < w->end; i++) {
        uint64_t lo = img->objects[i].start > w->start ? img->objects[i].start
                                                       : w->start;
        uint64_t hi = img->objects[i].end < w->end ? img->objects[i].end : w->end;
        if (lo < hi)
            memset(w->mark + (lo - w->start), M_OBJECT, hi - lo);
    }
}

static int walk_function(walker *w, builder *b, uint32_t fi, cfg_func *cf)
{
    const image_func *f = &w->img->funcs[fi];
    size_t n = f->end - f->start, avail;
    const uint8_t *code = image_code(w->img, f->start, &avail);
    if (!code || n == 0)
        return 0;
    if (n > w->cap) {
        free(w->mark);
        w->mark = malloc(5 * n);
        if (!w->mark)
            return -1;
        w->cap = n;
    }
    w->len = w->mark + n;
    w->flow = w->mark + 2 * n;
    w->leader = w->mark + 3 * n;
    w->gap = w->mark + 4 * n;
    memset(w->mark, 0, 5 * n);
    w->start = f->start;
    w->end = f->end;
    w->in_gap_func = f->source == FUNC_GAP;
    mark_objects(w);
    if (f->source != FUNC_GAP)
        push_work(w, f->start, CFG_BLOCK_ENTRY);
    drain(w);
    scan_gaps(w, code); /* the first pass: for the addresses gaps take */
    if (w->collect)
        return w->oom ? -1 : 0;
    spread_tables(w);
    mark_pointed(w);
    if (w->oom)
        return -1;
    return form_blocks(w, b, fi, cf);
}

int cfg_build(const code_image *img, cfg_program **out)
{
    *out = NULL;
    cfg_program *p = calloc(1, sizeof *p);
    walker *w = calloc(1, sizeof *w);
    if (w) {
        w->ptrs.elem = sizeof(uint64_t);
        w->deferred.elem = sizeof(deferred_table);
        w->data_refs.elem = sizeof(uint64_t);
        w->labels.elem = sizeof(uint64_t);
        w->calls.elem = sizeof(uint64_t);
        w->leas.elem = sizeof(uint64_t);
    }
    builder b = {{0, 0, 0, sizeof(cfg_block)}, {0, 0, 0, 8}, {0, 0, 0, 1}};
    int rc = p && w && x86_decoder_init(&w->dec) == 0 ? 0 : -1;
    if (!rc) {
        p->img = img;
        p->funcs = calloc(img->nfuncs ? img->nfuncs : 1, sizeof *p->funcs);
        w->img = img;
        w->stats = &p->stats;
        rc = p->funcs ? 0 : -1;
    }
    /* a first walk gathers the branches between functions, which start
     * blocks in the second as the code pointers of the data do */
    if (!rc) {
        code_pointers(w);
        w->collect = 1;
    }
    for (size_t i = 0; !rc && i < img->nfuncs; i++)
        rc = walk_function(w, &b, (uint32_t)i, &p->funcs[i]);
    if (!rc && !w->oom) {
        w->collect = 0;
        memset(&p->stats, 0, sizeof p->stats); /* counted by the second */
        if (w->ptrs.n)
            qsort(w->ptrs.v, w->ptrs.n, sizeof(uint64_t), cmp_u64);
        if (w->data_refs.n)
            qsort(w->data_refs.v, w->data_refs.n, sizeof(uint64_t), cmp_u64);
        if (w->labels.n)
            qsort(w->labels.v, w->labels.n, sizeof(uint64_t), cmp_u64);
        if (w->calls.n)
            qsort(w->calls.v, w->calls.n, sizeof(uint64_t), cmp_u64);
        if (w->leas.n)
            qsort(w->leas.v, w->leas.n, sizeof(uint64_t), cmp_u64);
    }
    for (size_t i = 0; !rc && i < img->nfuncs; i++)
        rc = walk_function(w, &b, (uint32_t)i, &p->funcs[i]);
    rc = rc || w->oom ? -1 : 0;
    if (w) {
        free(w->mark);
        free(w->work);
        if (!rc && !w->oom) {
            p->code_ptrs = w->ptrs.v;
            p->ncode_ptrs = w->ptrs.n;
        } else {
            free(w->ptrs.v);
        }
        free(w->data_refs.v);
        free(w->labels.v);
        free(w->calls.v);
        free(w->leas.v);
        free(w->deferred.v);
        free(w);
    }
    if (rc) {
        free(b.blocks.v);
        free(b.addr.v);
        free(b.len.v);
        cfg_free(p);
        return ELF_E_NOMEM;
    }
    p->blocks = b.blocks.v;
    p->nblocks = b.blocks.n;
    p->insn_addr = b.addr.v;
    p->insn_len = b.len.v;
    p->ninsn = b.addr.n;
    *out = p;
    return 0;
}

void cfg_free(cfg_program *p)
{
    if (!p)
        return;
    free(p->blocks);
    free(p->insn_addr);
    free(p->insn_len);
    free(p->funcs);
    free(p->code_ptrs);
    free(p);
}

const cfg_block *cfg_block_at(const cfg_program *p, uint64_t addr)
{
    size_t lo = 0, hi = p->nblocks;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const cfg_block *b = &p->blocks[mid];
        if (addr < b->start)
            hi = mid;
        else if (addr >= b->end)
            lo = mid + 1;
        else
            return b;
    }
    return NULL;
}
