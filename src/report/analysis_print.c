/*
 * analysis_print.c - the static analysis of an ELF file as text and JSON
 * (memtap analyze): the summary with the paper's n, m, W, MA and AIA, the
 * functions by memory instructions, one block in detail (its expressions,
 * classes and the distances between representatives), every block, and
 * the whole as one JSON object.
 */
#define _GNU_SOURCE
#include "report/analysis_print.h"

#include "report/json.h"
#include "symbols/elfimage.h"

#include <elf.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* The bypass rules, in the order of analysis_counts.bypass. */
static const char *const bypass_names[BYPASS_RULES] = {
    "stack", "static", "read_only", "tested_loads", "ignored"
};

/* "N (stack A, read-only B)": the operands the bypass rules left out. */
static void print_bypass(FILE *o, const analysis_counts *c)
{
    uint64_t all = 0;
    for (int i = 0; i < BYPASS_RULES; i++)
        all += c->bypass[i];
    fprintf(o, "bypassed             %" PRIu64, all);
    const char *sep = " (";
    for (int i = 0; i < BYPASS_RULES; i++)
        if (c->bypass[i]) {
            fprintf(o, "%s%s %" PRIu64, sep, bypass_names[i], c->bypass[i]);
            sep = ", ";
        }
    fprintf(o, "%s\n", all ? ")" : " (no bypass rule asked for)");
}

static const char *func_name(const analysis *a, size_t fi, char *buf, size_t cap)
{
    const image_func *f = &a->img->funcs[fi];
    if (f->name) {
        char *d = symbols_demangle(f->name);
        snprintf(buf, cap, "%s", d ? d : f->name);
        free(d);
    } else if (f->source == FUNC_GAP || f->source == FUNC_PLT) {
        const image_section *s = image_section_at(a->img, f->start);
        snprintf(buf, cap, "%s+0x%" PRIx64, s ? s->name : "?",
                 s ? f->start - s->addr : f->start);
    } else {
        snprintf(buf, cap, "sub_%" PRIx64, f->start);
    }
    return buf;
}

static double ratio(uint64_t num, uint64_t den)
{
    return den ? (double)num / (double)den : 0.0;
}

static const char *kind_name(const code_image *img)
{
    if (img->type == ET_REL)
        return "object file";
    if (img->type == ET_EXEC)
        return "executable";
    for (size_t i = 0; i < img->nsecs; i++)
        if (strcmp(img->secs[i].name, ".interp") == 0)
            return "position-independent executable";
    return "shared library";
}

/* ---- text ---------------------------------------------------------------- */

static int cmp_funcs_by_n(const void *pa, const void *pb, void *arg)
{
    const analysis *a = arg;
    size_t x = *(const size_t *)pa, y = *(const size_t *)pb;
    uint64_t nx = a->funcs[x].n, ny = a->funcs[y].n;
    if (nx != ny)
        return nx > ny ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* Functions with at least one explicit access, most first. */
static size_t funcs_by_accesses(const analysis *a, size_t **out)
{
    size_t *v = malloc((a->img->nfuncs + 1) * sizeof *v), k = 0;
    if (!v)
        return 0;
    for (size_t i = 0; i < a->img->nfuncs; i++)
        if (a->funcs[i].n)
            v[k++] = i;
    qsort_r(v, k, sizeof *v, cmp_funcs_by_n, (void *)a);
    *out = v;
    return k;
}

void analysis_print_summary(FILE *o, const analysis *a, const char *profile,
                            const analysis_weighted *w)
{
    const analysis_counts *t = &a->total;
    const select_params *p = &a->params;
    const cfg_stats *s = &a->cfg->stats;
    size_t nfunc = 0;
    for (size_t i = 0; i < a->img->nfuncs; i++)
        nfunc += a->cfg->funcs[i].nblocks > 0;
    fprintf(o, "%s: %s%s\n", a->img->path, kind_name(a->img),
           a->img->stripped ? ", stripped (functions from .dynsym, "
                              ".eh_frame and gaps)" : "");
    fprintf(o, "parameters: omega %.4g, chunk %" PRIu64 " B, scores %u,%u,%u%s\n",
           p->omega, p->chunk, p->scores.s1, p->scores.s2, p->scores.s3,
           p->nonselective ? ", non-selective" : "");
    fprintf(o, "\n");
    fprintf(o, "instructions         %" PRIu64 " in %" PRIu64 " blocks of %zu functions\n",
           t->insns, t->blocks, nfunc);
    fprintf(o, "memory instructions  %" PRIu64 " (n = %" PRIu64 " explicit accesses: %"
           PRIu64 " read, %" PRIu64 " written, %" PRIu64 " addressed from rsp)\n",
           t->mem_insns, t->n, t->explicit_reads, t->explicit_writes,
           t->explicit_stack);
    fprintf(o, "representatives      m = %" PRIu64 "\n", t->m);
    fprintf(o, "selected             %" PRIu64 " (knapsacks W = %" PRIu64 ")\n",
           t->selected, t->W);
    print_bypass(o, t);
    fprintf(o, "static MA            %.4f (%" PRIu64 "/%" PRIu64 " accesses)\n",
           ratio(t->ma_num, t->n), t->ma_num, t->n);
    fprintf(o, "static AIA           %.4f (%" PRIu64 "/%" PRIu64 " accesses)\n",
           ratio(t->aia_num, t->n), t->aia_num, t->n);
    fprintf(o, "mean over blocks     MA %.4f, AIA %.4f (%" PRIu64
           " blocks with accesses, each executed once)\n",
           t->blocks_with_mem ? t->block_ma_sum / (double)t->blocks_with_mem : 0,
           t->blocks_with_mem ? t->block_aia_sum / (double)t->blocks_with_mem : 0,
           t->blocks_with_mem);
    if (w) {
        fprintf(o, "profile %s: %" PRIu64 " of %" PRIu64 " entries name blocks, %"
               PRIu64 " executions of blocks with accesses\n",
               profile, w->matched, w->entries, w->executions);
        fprintf(o, "weighted MA          %.4f per block execution, %.4f per access\n",
               w->ma, w->ma_access);
        fprintf(o, "weighted AIA         %.4f per block execution, %.4f per access\n",
               w->aia, w->aia_access);
    }
    fprintf(o, "not instrumentable   implicit stack %" PRIu64 " (push, pop, call, "
           "ret, enter, leave), string %" PRIu64 ", other implicit %" PRIu64
           ",\n                     vector-indexed %" PRIu64
           " (gather/scatter), hints %" PRIu64 " (prefetch, clflush), "
           "unsupported %" PRIu64 "\n",
           t->implicit_stack, t->implicit_string, t->implicit_other, t->vsib,
           t->hints, t->unsupported);
    fprintf(o, "AVX-512 instructions %" PRIu64 "\n", t->avx512);
    fprintf(o, "disassembly          %" PRIu64 " jump tables (%" PRIu64
           " targets), %" PRIu64 " unresolved indirect jumps, %" PRIu64
           " jumps through\n                     pointers (PLT, tail calls), %"
           PRIu64 " gap entries, %" PRIu64 " padding bytes, %" PRIu64
           " undecodable\n                     bytes, %" PRIu64
           " overlapping targets\n",
           s->jump_tables, s->table_targets, s->unresolved_ijumps,
           s->pointer_jumps, s->gap_entries, s->padding_bytes,
           s->undecodable_bytes, s->overlaps);
}

void analysis_print_functions(FILE *o, const analysis *a, long top)
{
    size_t *order = NULL, k = funcs_by_accesses(a, &order);
    size_t shown = top > 0 && (size_t)top < k ? (size_t)top : k;
    fprintf(o, "\nfunctions by memory instructions (%zu of %zu with accesses):\n",
           shown, k);
    fprintf(o, "%10s %8s %7s %8s %8s %8s %7s %7s  %s\n", "address", "insns",
           "blocks", "mem", "m", "selected", "MA", "AIA", "function");
    char name[512];
    for (size_t r = 0; r < shown; r++) {
        size_t i = order[r];
        const analysis_counts *c = &a->funcs[i];
        fprintf(o, "%10" PRIx64 " %8" PRIu64 " %7" PRIu64 " %8" PRIu64 " %8" PRIu64
               " %8" PRIu64 " %7.4f %7.4f  %s\n",
               a->img->funcs[i].start, c->insns, c->blocks, c->mem_insns, c->m,
               c->selected, ratio(c->ma_num, c->n), ratio(c->aia_num, c->n),
               func_name(a, i, name, sizeof name));
    }
    free(order);
}

/* ---- one block ----------------------------------------------------------- */

typedef struct block_print {
    FILE *o;
    const analysis *a;
    const sel_expr *x;
    uint32_t n, next;
} block_print;

static void print_expr_line(const block_print *bp, uint32_t i)
{
    FILE *o = bp->o;
    const sel_expr *e = &bp->x[i];
    char expr[128];
    bid_format(&e->e, expr, sizeof expr);
    fprintf(o, "      %s %uB %s%s  class %" PRIx64, expr, e->size,
           e->read ? "R" : "", e->write ? "W" : "", bp->x[e->cls].addr);
    if (!e->rep) {
        fprintf(o, " (member)\n");
        return;
    }
    fprintf(o, "  v=<%u, %.2f>", e->class_size, e->mean_dist);
    if (e->selected)
        fprintf(o, "  SELECTED (iteration %u, ma %u, aia %u)", e->iteration,
               e->class_size, e->aia_count);
    else if (e->assoc != SEL_NONE)
        fprintf(o, "  distance 0 from %" PRIx64 ": counted there", bp->x[e->assoc].addr);
    else
        fprintf(o, "  not selected");
    fprintf(o, "\n");
}

static void print_block_insn(const x86_insn *insn, void *arg)
{
    block_print *bp = arg;
    FILE *o = bp->o;
    char text[160];
    x86_format(insn, text, sizeof text);
    fprintf(o, "  %10" PRIx64 "  %s\n", insn->addr, text);
    for (; bp->next < bp->n && bp->x[bp->next].addr == insn->addr; bp->next++)
        print_expr_line(bp, bp->next);
}

static void print_distances(FILE *o, const analysis *a, const sel_expr *x,
                            uint32_t n)
{
    fprintf(o, "\ndistances between representatives (chunk %" PRIu64 " B):\n%10s",
           a->params.chunk, "");
    for (uint32_t j = 0; j < n; j++)
        if (x[j].rep)
            fprintf(o, " %8" PRIx64, x[j].addr);
    fprintf(o, "\n");
    for (uint32_t i = 0; i < n; i++) {
        if (!x[i].rep)
            continue;
        fprintf(o, "%10" PRIx64, x[i].addr);
        for (uint32_t j = 0; j < n; j++) {
            if (!x[j].rep)
                continue;
            if (i == j || x[i].e.tmpl != x[j].e.tmpl)
                fprintf(o, " %8s", i == j ? "-" : "x");
            else
                fprintf(o, " %8u", bid_distance(&x[i].e, &x[j].e,
                                            &a->params.scores, a->params.chunk));
        }
        fprintf(o, "\n");
    }
}

int analysis_print_block(FILE *o, const analysis *a, uint64_t addr)
{
    const cfg_block *b = cfg_block_at(a->cfg, addr);
    if (!b)
        return ANALYSIS_PRINT_NO_BLOCK;
    const analysis_block *ab = &a->blocks[b - a->cfg->blocks];
    const sel_block *s = &ab->sel;
    char name[512];
    func_name(a, b->func, name, sizeof name);
    fprintf(o, "block %" PRIx64 "-%" PRIx64 " in %s+0x%" PRIx64 ": %u instructions\n",
           b->start, b->end, name, b->start - a->img->funcs[b->func].start,
           b->ninsn);
    fprintf(o, "n = %u, m = %u, W = %u, selected %u in %u iteration%s\n\n", s->n,
           s->m, s->W, s->selected, s->iterations, s->iterations == 1 ? "" : "s");
    block_print bp = { o, a, a->exprs + ab->first_expr, s->n, 0 };
    if (analysis_block_insns(a, b, print_block_insn, &bp))
        return ANALYSIS_PRINT_UNDECODABLE;
    if (s->m > 1)
        print_distances(o, a, bp.x, s->n);
    fprintf(o, "\nMA_b = %u/%u = %.4f   AIA_b = %u/%u = %.4f\n", s->ma_num, s->n,
           ratio(s->ma_num, s->n), s->aia_num, s->n, ratio(s->aia_num, s->n));
    return 0;
}

void analysis_print_blocks(FILE *o, const analysis *a)
{
    char name[512];
    fprintf(o, "# start end insns n m selected MA_b AIA_b kind function\n"
               "# kind: e function entry, b branch target, t table or data "
               "pointer target, g found by scanning unreached bytes, d bytes "
               "taken as data (never patched), - none\n");
    for (size_t i = 0; i < a->cfg->nblocks; i++) {
        const cfg_block *b = &a->cfg->blocks[i];
        const sel_block *s = &a->blocks[i].sel;
        char kind[6], *k = kind;
        if (b->flags & CFG_BLOCK_ENTRY) *k++ = 'e';
        if (b->flags & CFG_BLOCK_BRANCH_TARGET) *k++ = 'b';
        if (b->flags & CFG_BLOCK_TABLE_TARGET) *k++ = 't';
        if (b->flags & CFG_BLOCK_GAP) *k++ = 'g';
        if (b->flags & CFG_BLOCK_DATA) *k++ = 'd';
        if (k == kind) *k++ = '-';
        *k = 0;
        fprintf(o, "%" PRIx64 " %" PRIx64 " %u %u %u %u %.4f %.4f %s %s\n", b->start,
               b->end, b->ninsn, s->n, s->m, s->selected, ratio(s->ma_num, s->n),
               ratio(s->aia_num, s->n), kind, func_name(a, b->func, name, sizeof name));
    }
}

/* ---- JSON ---------------------------------------------------------------- */

static void json_counts(FILE *o, const analysis_counts *c)
{
    fprintf(o, "\"instructions\": %" PRIu64 ", \"blocks\": %" PRIu64
           ", \"memory_instructions\": %" PRIu64 ", \"n\": %" PRIu64
           ", \"m\": %" PRIu64 ", \"W\": %" PRIu64 ", \"selected\": %" PRIu64
           ", \"ma\": %.6f, \"aia\": %.6f",
           c->insns, c->blocks, c->mem_insns, c->n, c->m, c->W, c->selected,
           ratio(c->ma_num, c->n), ratio(c->aia_num, c->n));
    fprintf(o, ", \"bypass\": {");
    for (int i = 0; i < BYPASS_RULES; i++)
        fprintf(o, "%s\"%s\": %" PRIu64, i ? ", " : "", bypass_names[i],
               c->bypass[i]);
    fputc('}', o);
}

void analysis_print_json(FILE *o, const analysis *a, const analysis_weighted *w)
{
    const analysis_counts *t = &a->total;
    const select_params *p = &a->params;
    const cfg_stats *s = &a->cfg->stats;
    fprintf(o, "{\"file\": ");
    json_str(o, a->img->path);
    fprintf(o, ", \"kind\": ");
    json_str(o, kind_name(a->img));
    fprintf(o, ", \"stripped\": %s,\n \"parameters\": {\"omega\": %.6g, \"chunk\": %"
           PRIu64 ", \"s1\": %u, \"s2\": %u, \"s3\": %u, \"nonselective\": %s},\n",
           a->img->stripped ? "true" : "false", p->omega, p->chunk, p->scores.s1,
           p->scores.s2, p->scores.s3, p->nonselective ? "true" : "false");
    fprintf(o, " \"total\": {");
    json_counts(o, t);
    fprintf(o, ", \"ma_blocks\": %.6f, \"aia_blocks\": %.6f, \"blocks_with_accesses\": %"
           PRIu64 ",\n  \"explicit_reads\": %" PRIu64 ", \"explicit_writes\": %"
           PRIu64 ", \"explicit_stack\": %" PRIu64 ", \"implicit_stack\": %" PRIu64
           ", \"implicit_string\": %" PRIu64 ", \"implicit_other\": %" PRIu64
           ", \"vector_indexed\": %" PRIu64 ", \"hints\": %" PRIu64
           ", \"unsupported\": %" PRIu64 ", \"avx512\": %" PRIu64 "},\n",
           t->blocks_with_mem ? t->block_ma_sum / (double)t->blocks_with_mem : 0,
           t->blocks_with_mem ? t->block_aia_sum / (double)t->blocks_with_mem : 0,
           t->blocks_with_mem, t->explicit_reads, t->explicit_writes,
           t->explicit_stack, t->implicit_stack, t->implicit_string,
           t->implicit_other, t->vsib, t->hints, t->unsupported, t->avx512);
    fprintf(o, " \"disassembly\": {\"jump_tables\": %" PRIu64 ", \"table_targets\": %"
           PRIu64 ", \"unresolved_indirect_jumps\": %" PRIu64
           ", \"pointer_jumps\": %" PRIu64 ", \"gap_entries\": %" PRIu64 ", \"padding_bytes\": %" PRIu64
           ", \"undecodable_bytes\": %" PRIu64 ", \"overlaps\": %" PRIu64 "},\n",
           s->jump_tables, s->table_targets, s->unresolved_ijumps,
           s->pointer_jumps, s->gap_entries,
           s->padding_bytes, s->undecodable_bytes, s->overlaps);
    if (w)
        fprintf(o, " \"weighted\": {\"entries\": %" PRIu64 ", \"matched\": %" PRIu64
               ", \"executions\": %" PRIu64 ", \"ma\": %.6f, \"aia\": %.6f, "
               "\"ma_access\": %.6f, \"aia_access\": %.6f},\n",
               w->entries, w->matched, w->executions, w->ma, w->aia,
               w->ma_access, w->aia_access);
    fprintf(o, " \"functions\": [");
    size_t *order = NULL, k = funcs_by_accesses(a, &order);
    char name[512];
    for (size_t r = 0; r < k; r++) {
        size_t i = order[r];
        fprintf(o, "%s\n  {\"name\": ", r ? "," : "");
        json_str(o, func_name(a, i, name, sizeof name));
        fprintf(o, ", \"start\": %" PRIu64 ", \"end\": %" PRIu64 ", ",
               a->img->funcs[i].start, a->img->funcs[i].end);
        json_counts(o, &a->funcs[i]);
        fprintf(o, "}");
    }
    free(order);
    fprintf(o, "]}\n");
}
