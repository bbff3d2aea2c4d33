/*
 * cmd_analyze.c - "memtap analyze": which memory instructions of an ELF
 * file the selective instrumentation would instrument, and the accuracy
 * that buys (static MA/AIA per block, per function and in total; weighted
 * by block executions when given a profile).  Text, JSON, or one block in
 * detail.
 */
#define _GNU_SOURCE
#include "cli.h"

#include <elf.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "memtap/trace.h"
#include "report/json.h"
#include "rewrite/rewrite.h"
#include "analysis/analysis.h"
#include "symbols/elfimage.h"

static const char usage[] =
    "usage: memtap analyze [options] PROGRAM|LIBRARY|OBJECT\n"
    "\n"
    "Analyses every basic block of an x86-64 ELF file and reports which\n"
    "memory instructions selective instrumentation would instrument\n"
    "(BID expressions, classes, distances, iterative knapsack) and the\n"
    "static accuracy that buys (MA and AIA).\n"
    "\n"
    "  --omega W          cost factor in [0,1]: instrument ceil(W*m) of the\n"
    "                     m expression classes of each block (default 0.25)\n"
    "  --chunk C          chunk size in bytes (default 64)\n"
    "  --scores S1,S2,S3  distance scores (default 1,3,5; S1<S2<S3, S1+S2<S3)\n"
    "  --nonselective     instrument every memory instruction (baseline)\n"
    BYPASS_HELP
    "  --profile FILE     block execution counts: the trace of a run of the\n"
    "                     file instrumented with --profile, or lines\n"
    "                     'ADDRESS COUNT'; also report accuracy weighted by\n"
    "                     executions\n"
    "  --block ADDR       show the block holding ADDR in detail\n"
    "  --blocks           list every block: start, end, instructions, n, m,\n"
    "                     selected, MA_b, AIA_b, function\n"
    "  --top N            functions listed (default 20, 0 for all)\n"
    "  --json             machine-readable output\n"
    "  -h, --help         show this help\n";

/* The bypass rules, in the order of analysis_counts.bypass. */
static const char *const bypass_names[BYPASS_RULES] = {
    "stack", "static", "read_only", "tested_loads", "ignored"
};

/* "N (stack A, read-only B)": the operands the bypass rules left out. */
static void print_bypass(const analysis_counts *c)
{
    uint64_t all = 0;
    for (int i = 0; i < BYPASS_RULES; i++)
        all += c->bypass[i];
    printf("bypassed             %" PRIu64, all);
    const char *sep = " (";
    for (int i = 0; i < BYPASS_RULES; i++)
        if (c->bypass[i]) {
            printf("%s%s %" PRIu64, sep, bypass_names[i], c->bypass[i]);
            sep = ", ";
        }
    printf("%s\n", all ? ")" : " (no bypass rule asked for)");
}

typedef struct analyze_opts {
    select_params params;
    const char *profile;
    int has_block, json, blocks;
    uint64_t block;
    long top;
} analyze_opts;

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

static void print_summary(const analysis *a, const analyze_opts *o,
                          const analysis_weighted *w)
{
    const analysis_counts *t = &a->total;
    const select_params *p = &a->params;
    const cfg_stats *s = &a->cfg->stats;
    size_t nfunc = 0;
    for (size_t i = 0; i < a->img->nfuncs; i++)
        nfunc += a->cfg->funcs[i].nblocks > 0;
    printf("%s: %s%s\n", a->img->path, kind_name(a->img),
           a->img->stripped ? ", stripped (functions from .dynsym, "
                              ".eh_frame and gaps)" : "");
    printf("parameters: omega %.4g, chunk %" PRIu64 " B, scores %u,%u,%u%s\n",
           p->omega, p->chunk, p->scores.s1, p->scores.s2, p->scores.s3,
           p->nonselective ? ", non-selective" : "");
    printf("\n");
    printf("instructions         %" PRIu64 " in %" PRIu64 " blocks of %zu functions\n",
           t->insns, t->blocks, nfunc);
    printf("memory instructions  %" PRIu64 " (n = %" PRIu64 " explicit accesses: %"
           PRIu64 " read, %" PRIu64 " written, %" PRIu64 " addressed from rsp)\n",
           t->mem_insns, t->n, t->explicit_reads, t->explicit_writes,
           t->explicit_stack);
    printf("representatives      m = %" PRIu64 "\n", t->m);
    printf("selected             %" PRIu64 " (knapsacks W = %" PRIu64 ")\n",
           t->selected, t->W);
    print_bypass(t);
    printf("static MA            %.4f (%" PRIu64 "/%" PRIu64 " accesses)\n",
           ratio(t->ma_num, t->n), t->ma_num, t->n);
    printf("static AIA           %.4f (%" PRIu64 "/%" PRIu64 " accesses)\n",
           ratio(t->aia_num, t->n), t->aia_num, t->n);
    printf("mean over blocks     MA %.4f, AIA %.4f (%" PRIu64
           " blocks with accesses, each executed once)\n",
           t->blocks_with_mem ? t->block_ma_sum / (double)t->blocks_with_mem : 0,
           t->blocks_with_mem ? t->block_aia_sum / (double)t->blocks_with_mem : 0,
           t->blocks_with_mem);
    if (w) {
        printf("profile %s: %" PRIu64 " of %" PRIu64 " entries name blocks, %"
               PRIu64 " executions of blocks with accesses\n",
               o->profile, w->matched, w->entries, w->executions);
        printf("weighted MA          %.4f per block execution, %.4f per access\n",
               w->ma, w->ma_access);
        printf("weighted AIA         %.4f per block execution, %.4f per access\n",
               w->aia, w->aia_access);
    }
    printf("not instrumentable   implicit stack %" PRIu64 " (push, pop, call, "
           "ret, enter, leave), string %" PRIu64 ", other implicit %" PRIu64
           ",\n                     vector-indexed %" PRIu64
           " (gather/scatter), hints %" PRIu64 " (prefetch, clflush), "
           "unsupported %" PRIu64 "\n",
           t->implicit_stack, t->implicit_string, t->implicit_other, t->vsib,
           t->hints, t->unsupported);
    printf("AVX-512 instructions %" PRIu64 "\n", t->avx512);
    printf("disassembly          %" PRIu64 " jump tables (%" PRIu64
           " targets), %" PRIu64 " unresolved indirect jumps, %" PRIu64
           " jumps through\n                     pointers (PLT, tail calls), %"
           PRIu64 " gap entries, %" PRIu64 " padding bytes, %" PRIu64
           " undecodable\n                     bytes, %" PRIu64
           " overlapping targets\n",
           s->jump_tables, s->table_targets, s->unresolved_ijumps,
           s->pointer_jumps, s->gap_entries, s->padding_bytes,
           s->undecodable_bytes, s->overlaps);
}

static void print_functions(const analysis *a, long top)
{
    size_t *order = NULL, k = funcs_by_accesses(a, &order);
    size_t shown = top > 0 && (size_t)top < k ? (size_t)top : k;
    printf("\nfunctions by memory instructions (%zu of %zu with accesses):\n",
           shown, k);
    printf("%10s %8s %7s %8s %8s %8s %7s %7s  %s\n", "address", "insns",
           "blocks", "mem", "m", "selected", "MA", "AIA", "function");
    char name[512];
    for (size_t r = 0; r < shown; r++) {
        size_t i = order[r];
        const analysis_counts *c = &a->funcs[i];
        printf("%10" PRIx64 " %8" PRIu64 " %7" PRIu64 " %8" PRIu64 " %8" PRIu64
               " %8" PRIu64 " %7.4f %7.4f  %s\n",
               a->img->funcs[i].start, c->insns, c->blocks, c->mem_insns, c->m,
               c->selected, ratio(c->ma_num, c->n), ratio(c->aia_num, c->n),
               func_name(a, i, name, sizeof name));
    }
    free(order);
}

/* ---- one block ----------------------------------------------------------- */

typedef struct block_print {
    const analysis *a;
    const sel_expr *x;
    uint32_t n, next;
} block_print;

static void print_expr_line(const block_print *bp, uint32_t i)
{
    const sel_expr *e = &bp->x[i];
    char expr[128];
    bid_format(&e->e, expr, sizeof expr);
    printf("      %s %uB %s%s  class %" PRIx64, expr, e->size,
           e->read ? "R" : "", e->write ? "W" : "", bp->x[e->cls].addr);
    if (!e->rep) {
        printf(" (member)\n");
        return;
    }
    printf("  v=<%u, %.2f>", e->class_size, e->mean_dist);
    if (e->selected)
        printf("  SELECTED (iteration %u, ma %u, aia %u)", e->iteration,
               e->class_size, e->aia_count);
    else if (e->assoc != SEL_NONE)
        printf("  distance 0 from %" PRIx64 ": counted there", bp->x[e->assoc].addr);
    else
        printf("  not selected");
    printf("\n");
}

static void print_block_insn(const x86_insn *insn, void *arg)
{
    block_print *bp = arg;
    char text[160];
    x86_format(insn, text, sizeof text);
    printf("  %10" PRIx64 "  %s\n", insn->addr, text);
    for (; bp->next < bp->n && bp->x[bp->next].addr == insn->addr; bp->next++)
        print_expr_line(bp, bp->next);
}

static void print_distances(const analysis *a, const sel_expr *x, uint32_t n)
{
    printf("\ndistances between representatives (chunk %" PRIu64 " B):\n%10s",
           a->params.chunk, "");
    for (uint32_t j = 0; j < n; j++)
        if (x[j].rep)
            printf(" %8" PRIx64, x[j].addr);
    printf("\n");
    for (uint32_t i = 0; i < n; i++) {
        if (!x[i].rep)
            continue;
        printf("%10" PRIx64, x[i].addr);
        for (uint32_t j = 0; j < n; j++) {
            if (!x[j].rep)
                continue;
            if (i == j || x[i].e.tmpl != x[j].e.tmpl)
                printf(" %8s", i == j ? "-" : "x");
            else
                printf(" %8u", bid_distance(&x[i].e, &x[j].e,
                                            &a->params.scores, a->params.chunk));
        }
        printf("\n");
    }
}

static int print_block(const analysis *a, uint64_t addr)
{
    const cfg_block *b = cfg_block_at(a->cfg, addr);
    if (!b)
        return cli_error("analyze", "no basic block holds 0x%" PRIx64, addr);
    const analysis_block *ab = &a->blocks[b - a->cfg->blocks];
    const sel_block *s = &ab->sel;
    char name[512];
    func_name(a, b->func, name, sizeof name);
    printf("block %" PRIx64 "-%" PRIx64 " in %s+0x%" PRIx64 ": %u instructions\n",
           b->start, b->end, name, b->start - a->img->funcs[b->func].start,
           b->ninsn);
    printf("n = %u, m = %u, W = %u, selected %u in %u iteration%s\n\n", s->n,
           s->m, s->W, s->selected, s->iterations, s->iterations == 1 ? "" : "s");
    block_print bp = {a, a->exprs + ab->first_expr, s->n, 0};
    if (analysis_block_insns(a, b, print_block_insn, &bp))
        return cli_error("analyze", "cannot decode block 0x%" PRIx64, b->start);
    if (s->m > 1)
        print_distances(a, bp.x, s->n);
    printf("\nMA_b = %u/%u = %.4f   AIA_b = %u/%u = %.4f\n", s->ma_num, s->n,
           ratio(s->ma_num, s->n), s->aia_num, s->n, ratio(s->aia_num, s->n));
    return 0;
}

static void print_blocks(const analysis *a)
{
    char name[512];
    printf("# start end insns n m selected MA_b AIA_b function\n");
    for (size_t i = 0; i < a->cfg->nblocks; i++) {
        const cfg_block *b = &a->cfg->blocks[i];
        const sel_block *s = &a->blocks[i].sel;
        printf("%" PRIx64 " %" PRIx64 " %u %u %u %u %.4f %.4f %s\n", b->start,
               b->end, b->ninsn, s->n, s->m, s->selected, ratio(s->ma_num, s->n),
               ratio(s->aia_num, s->n), func_name(a, b->func, name, sizeof name));
    }
}

/* ---- JSON ---------------------------------------------------------------- */

static void json_counts(const analysis_counts *c)
{
    printf("\"instructions\": %" PRIu64 ", \"blocks\": %" PRIu64
           ", \"memory_instructions\": %" PRIu64 ", \"n\": %" PRIu64
           ", \"m\": %" PRIu64 ", \"W\": %" PRIu64 ", \"selected\": %" PRIu64
           ", \"ma\": %.6f, \"aia\": %.6f",
           c->insns, c->blocks, c->mem_insns, c->n, c->m, c->W, c->selected,
           ratio(c->ma_num, c->n), ratio(c->aia_num, c->n));
    printf(", \"bypass\": {");
    for (int i = 0; i < BYPASS_RULES; i++)
        printf("%s\"%s\": %" PRIu64, i ? ", " : "", bypass_names[i],
               c->bypass[i]);
    putchar('}');
}

static void print_json(const analysis *a, const analysis_weighted *w)
{
    const analysis_counts *t = &a->total;
    const select_params *p = &a->params;
    const cfg_stats *s = &a->cfg->stats;
    printf("{\"file\": ");
    json_str(stdout, a->img->path);
    printf(", \"kind\": ");
    json_str(stdout, kind_name(a->img));
    printf(", \"stripped\": %s,\n \"parameters\": {\"omega\": %.6g, \"chunk\": %"
           PRIu64 ", \"s1\": %u, \"s2\": %u, \"s3\": %u, \"nonselective\": %s},\n",
           a->img->stripped ? "true" : "false", p->omega, p->chunk, p->scores.s1,
           p->scores.s2, p->scores.s3, p->nonselective ? "true" : "false");
    printf(" \"total\": {");
    json_counts(t);
    printf(", \"ma_blocks\": %.6f, \"aia_blocks\": %.6f, \"blocks_with_accesses\": %"
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
    printf(" \"disassembly\": {\"jump_tables\": %" PRIu64 ", \"table_targets\": %"
           PRIu64 ", \"unresolved_indirect_jumps\": %" PRIu64
           ", \"pointer_jumps\": %" PRIu64 ", \"gap_entries\": %" PRIu64 ", \"padding_bytes\": %" PRIu64
           ", \"undecodable_bytes\": %" PRIu64 ", \"overlaps\": %" PRIu64 "},\n",
           s->jump_tables, s->table_targets, s->unresolved_ijumps,
           s->pointer_jumps, s->gap_entries,
           s->padding_bytes, s->undecodable_bytes, s->overlaps);
    if (w)
        printf(" \"weighted\": {\"entries\": %" PRIu64 ", \"matched\": %" PRIu64
               ", \"executions\": %" PRIu64 ", \"ma\": %.6f, \"aia\": %.6f, "
               "\"ma_access\": %.6f, \"aia_access\": %.6f},\n",
               w->entries, w->matched, w->executions, w->ma, w->aia,
               w->ma_access, w->aia_access);
    printf(" \"functions\": [");
    size_t *order = NULL, k = funcs_by_accesses(a, &order);
    char name[512];
    for (size_t r = 0; r < k; r++) {
        size_t i = order[r];
        printf("%s\n  {\"name\": ", r ? "," : "");
        json_str(stdout, func_name(a, i, name, sizeof name));
        printf(", \"start\": %" PRIu64 ", \"end\": %" PRIu64 ", ",
               a->img->funcs[i].start, a->img->funcs[i].end);
        json_counts(&a->funcs[i]);
        printf("}");
    }
    free(order);
    printf("]}\n");
}

/* ---- options ------------------------------------------------------------- */

static int parse_u64(const char *s, int base, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, base);
    if (errno || end == s || *end || *s == '-')
        return -1;
    *out = v;
    return 0;
}

/* The --ignore and --tested=LIST arguments, until the file they name
 * ranges of is known. */
static const char *ignore_args[SELECT_IGNORE_MAX];
static const char *tested_args[SELECT_IGNORE_MAX];
static unsigned ntested_args;

/* The ranges of the comma-separated items of list (A-B or SYMBOL of file)
 * appended to r[*n]; 0, or 1 after printing an error. */
static int parse_range_list(const char *opt, const char *list,
                            const char *file, select_range *r, unsigned *n)
{
    while (*list) {
        size_t len = strcspn(list, ",");
        char item[256];
        if (len >= sizeof item)
            return cli_error(opt, "'%.*s': too long", (int)len, list);
        if (*n == SELECT_IGNORE_MAX)
            return cli_error(opt, "at most %d ranges", SELECT_IGNORE_MAX);
        memcpy(item, list, len);
        item[len] = '\0';
        if (len && cli_parse_range(opt, item, file, &r[*n].lo, &r[*n].hi))
            return 1;
        *n += len != 0;
        list += len + (list[len] == ',');
    }
    return 0;
}

int cli_select_ranges(select_params *p, const char *file)
{
    for (unsigned i = 0; i < p->nignore; i++)
        if (cli_parse_range("--ignore", ignore_args[i], file, &p->ignore[i].lo,
                             &p->ignore[i].hi))
            return 1;
    if (p->nignore)
        p->bypass |= BYPASS_IGNORED;
    p->ntested = 0;
    for (unsigned i = 0; i < ntested_args; i++)
        if (parse_range_list("--tested", tested_args[i], file, p->tested,
                             &p->ntested))
            return 1;
    return 0;
}

int cli_select_option(int c, const char *arg, select_params *p,
                      const char *cmd)
{
    char *end;
    unsigned only;
    switch (c) {
    case 'O':
        if (cli_parse_only(arg, &only))
            return cli_error(cmd, "--only: '%s': expected a comma-separated "
                                  "list of heap, static and stack", arg);
        p->bypass = (p->bypass & ~(unsigned)(BYPASS_STACK | BYPASS_STATIC)) |
                    only;
        return 0;
    case 'R':
        p->bypass |= BYPASS_READ_ONLY;
        return 0;
    case 'M':
        p->implicit = 1;
        return 0;
    case 'L': /* --tested: the whole file; --tested=LIST: its ranges */
        p->bypass |= BYPASS_LOADS;
        if (arg && ntested_args == SELECT_IGNORE_MAX)
            return cli_error(cmd, "--tested: at most %d lists",
                             SELECT_IGNORE_MAX);
        if (arg)
            tested_args[ntested_args++] = arg;
        return 0;
    case 'I': /* resolved once the file is known (cli_select_ranges) */
        if (p->nignore == SELECT_IGNORE_MAX)
            return cli_error(cmd, "--ignore: at most %d ranges",
                             SELECT_IGNORE_MAX);
        ignore_args[p->nignore++] = arg;
        return 0;
    case 'w':
        p->omega = strtod(arg, &end);
        if (end == arg || *end)
            return cli_error(cmd, "--omega: not a number: %s", arg);
        return 0;
    case 'c':
        if (parse_u64(arg, 0, &p->chunk))
            return cli_error(cmd, "--chunk: not a size: %s", arg);
        return 0;
    case 's':
        if (sscanf(arg, "%u,%u,%u", &p->scores.s1, &p->scores.s2,
                   &p->scores.s3) != 3)
            return cli_error(cmd, "--scores: expected S1,S2,S3");
        return 0;
    default: /* 'n' */
        p->nonselective = 1;
        return 0;
    }
}

static int parse_opts(int argc, char **argv, analyze_opts *o, const char **path)
{
    static const struct option longs[] = {
        {"omega", required_argument, 0, 'w'},
        {"chunk", required_argument, 0, 'c'},
        {"scores", required_argument, 0, 's'},
        {"nonselective", no_argument, 0, 'n'},
        {"only", required_argument, 0, 'O'},
        {"ignore-read-only", no_argument, 0, 'R'},
        {"tested", optional_argument, 0, 'L'},
        {"implicit", no_argument, 0, 'M'},
        {"ignore", required_argument, 0, 'I'},
        {"profile", required_argument, 0, 'p'},
        {"block", required_argument, 0, 'b'},
        {"top", required_argument, 0, 't'},
        {"json", no_argument, 0, 'j'},
        {"blocks", no_argument, 0, 'B'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    select_params_default(&o->params);
    o->top = 20;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
        uint64_t v;
        switch (c) {
        case 'w':
        case 'c':
        case 's':
        case 'n':
        case 'O':
        case 'R':
        case 'L':
        case 'I':
        case 'M':
            if (cli_select_option(c, optarg, &o->params, "analyze"))
                return 2;
            break;
        case 'p':
            o->profile = optarg;
            break;
        case 'b':
            if (parse_u64(optarg, 16, &o->block))
                return cli_error("analyze", "--block: not an address: %s", optarg) + 1;
            o->has_block = 1;
            break;
        case 't':
            if (parse_u64(optarg, 10, &v))
                return cli_error("analyze", "--top: not a count: %s", optarg) + 1;
            o->top = (long)v;
            break;
        case 'j':
            o->json = 1;
            break;
        case 'B':
            o->blocks = 1;
            break;
        case 'h':
            fputs(usage, stdout);
            return -1;
        default:
            fputs(usage, stderr);
            return 2;
        }
    }
    if (optind != argc - 1) {
        fputs(usage, stderr);
        return 2;
    }
    *path = argv[optind];
    if (cli_select_ranges(&o->params, *path))
        return 2;
    const char *why = select_params_check(&o->params);
    if (why)
        return cli_error("analyze", "%s", why) + 1;
    return 0;
}

/* The block counts a trace holds for the file at path (its rewritten copy
 * ran with --profile).  Returns 0, or -1 with the reason in err. */
static int weigh_trace(const analysis *a, const char *path, const char *trace,
                       analysis_weighted *w, char *err, size_t cap)
{
    memset(w, 0, sizeof *w);
    uint64_t id;
    if (rewrite_source_id(path, &id) != 0)
        return snprintf(err, cap, "cannot read %s", path), -1;
    memtap_trace *t;
    int st = memtap_trace_open(trace, &t);
    if (st != MEMTAP_OK)
        return snprintf(err, cap, "%s", memtap_status_string(st)), -1;
    memtap_event ev;
    uint64_t others = 0;
    while ((st = memtap_trace_next(t, &ev)) == 1) {
        if (ev.rec.kind != MEMTAP_EV_BLOCK_COUNT)
            continue;
        if (ev.rec.addr2 == id)
            analysis_weigh_add(a, w, ev.rec.addr, ev.rec.aux);
        else
            others++;
    }
    memtap_trace_close(t);
    if (st < 0)
        return snprintf(err, cap, "%s", memtap_status_string(st)), -1;
    if (!w->entries)
        return snprintf(err, cap, "no block counts of %s (%" PRIu64
                        " of other files): run a copy made by 'memtap "
                        "instrument --profile'", path, others), -1;
    analysis_weigh_done(w);
    return 0;
}

static int is_trace(const char *path)
{
    char magic[8] = { 0 };
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t n = fread(magic, 1, sizeof magic, f);
    fclose(f);
    return n == sizeof magic && memcmp(magic, MEMTAP_TRACE_MAGIC, 8) == 0;
}

int cmd_analyze(int argc, char **argv)
{
    analyze_opts o = {0};
    const char *path = NULL;
    int rc = parse_opts(argc, argv, &o, &path);
    if (rc)
        return rc < 0 ? 0 : rc;
    analysis *a;
    rc = analysis_run(path, &o.params, &a);
    if (rc)
        return cli_error(path, "%s", image_strerror(rc));
    analysis_weighted w;
    char err[256];
    if (o.profile && (is_trace(o.profile)
                          ? weigh_trace(a, path, o.profile, &w, err, sizeof err)
                          : analysis_weigh(a, o.profile, &w, err, sizeof err))) {
        analysis_free(a);
        return cli_error(o.profile, "%s", err);
    }
    rc = 0;
    if (o.has_block)
        rc = print_block(a, o.block);
    else if (o.blocks)
        print_blocks(a);
    else if (o.json)
        print_json(a, o.profile ? &w : NULL);
    else {
        print_summary(a, &o, o.profile ? &w : NULL);
        print_functions(a, o.top);
    }
    analysis_free(a);
    return rc;
}
