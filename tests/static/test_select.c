/*
 * test_select.c - the static analysis on cases.S, against results derived
 * by hand from the selective-instrumentation paper's rules.
 *
 * The slides' example (one block of 18 loads, C = 16 B):
 *   classes, in order of first appearance (a write to rax between two
 *   loads through rax gives them different incarnations):
 *     A = -0x4(%rbp)  {1,4,8,14,17}  |A| = 5
 *     B = -0x8(%rbp)  {2,5,12,15}    |B| = 4
 *     C = -0x18(%rbp) {3,6,16}       |C| = 3
 *     D = (%rax) after 6             |D| = 1
 *     E = -0xc(%rbp)  {9,11}         |E| = 2
 *     F = 0x601120(,%rax,4) (IRR)    |F| = 1
 *     G = 0x601060(,%rax,4) (IRR)    |G| = 1
 *     H = (%rax) after 16            |H| = 1        n = 18, m = 8
 *   RRI distances (same base rbp and nil index: 0 if |d-d'| < 16, else
 *   s3 = 5; different base, same nil index: s2 = 3):
 *     A-B 0, A-C 5, A-E 0, B-C 5, B-E 0, C-E 0, D/H to anything 3.
 *   Means over the 5 other RRI candidates: A 11/5, B 11/5, C 16/5,
 *   D 15/5, E 6/5, H 15/5; IRR: |0x601120-0x601060| = 192 >= 16 so F-G 5,
 *   means 5.  Values, best first: A<5>, B<4>, C<3>, E<2>, F<1,5>, G<1,5>,
 *   D<1,3>, H<1,3>.
 *   omega 0.5: W = ceil(0.5*8) = 4.  Iteration 1 takes A, freezes B and E
 *   (distance 0 from A), takes C, F, G: K = {A, C, F, G}.
 *   MA = (5+3+1+1)/18 = 10/18.  B and E are at distance 0 from A (E also
 *   from C; it counts with the more valuable A): A^ = 5+4+2 = 11, so
 *   AIA = (11+3+1+1)/18 = 16/18.
 *   omega 0.25: W = 2, K = {A, C}: MA = 8/18, AIA = (11+3)/18 = 14/18.
 *   omega 1: W = 8.  Iteration 1 takes A, C, F, G, D, H; iteration 2 sees
 *   B and E (|-8+12| = 4 < 16: distance 0) and takes B; iteration 3 takes
 *   E.  MA = AIA = 1.
 *   C = 4, omega 0.5: no two of -4, -8, -0xc, -0x18 are closer than 4, so
 *   nothing is frozen: K = {A, B, C, E}, MA = AIA = 14/18.
 */
#include <inttypes.h>
#include <math.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/check.h"
#include "analysis/analysis.h"

static const char *object;

static analysis *run(double omega, uint64_t chunk, int nonselective)
{
    select_params p;
    select_params_default(&p);
    p.omega = omega;
    p.chunk = chunk;
    p.nonselective = nonselective;
    analysis *a = NULL;
    int rc = analysis_run(object, &p, &a);
    if (rc) {
        fprintf(stderr, "%s: %s\n", object, elf_strerror(rc));
        exit(1);
    }
    return a;
}

static const cfg_block *func_block(const analysis *a, const char *name)
{
    for (size_t i = 0; i < a->img->nfuncs; i++)
        if (a->img->funcs[i].name && strcmp(a->img->funcs[i].name, name) == 0)
            return &a->cfg->blocks[a->cfg->funcs[i].first_block];
    fprintf(stderr, "no function %s\n", name);
    exit(1);
}

static const analysis_block *ablock(const analysis *a, const cfg_block *b)
{
    return &a->blocks[b - a->cfg->blocks];
}

/* 1-based instruction numbers of the knapsack, as a bit set. */
static unsigned selected_set(const analysis *a, const analysis_block *ab)
{
    unsigned set = 0;
    for (uint32_t i = 0; i < ab->sel.n; i++)
        if (a->exprs[ab->first_expr + i].selected)
            set |= 1u << (i + 1);
    return set;
}

#define BIT(k) (1u << (k))

static void slides(double omega, uint64_t chunk, unsigned want_w,
                   unsigned want_sel, unsigned ma, unsigned aia,
                   unsigned iterations)
{
    analysis *a = run(omega, chunk, 0);
    const cfg_block *b = func_block(a, "slides_example");
    const analysis_block *ab = ablock(a, b);
    const sel_expr *x = a->exprs + ab->first_expr;
    CHECK_EQ_U64(b->ninsn, 19);
    CHECK_EQ_U64(ab->sel.n, 18);
    CHECK_EQ_U64(ab->sel.m, 8);
    /* class sizes in order of first appearance: 5,4,3,1,2,1,1,1 */
    static const unsigned sizes[] = {5, 4, 3, 1, 2, 1, 1, 1};
    static const unsigned reps[] = {1, 2, 3, 7, 9, 10, 13, 18};
    for (unsigned k = 0; k < 8; k++) {
        CHECK(x[reps[k] - 1].rep);
        CHECK_EQ_U64(x[reps[k] - 1].class_size, sizes[k]);
    }
    /* members point at their representative */
    CHECK_EQ_U64(x[16].cls, 0);   /* 17 is A */
    CHECK_EQ_U64(x[11].cls, 1);   /* 12 is B */
    CHECK_EQ_U64(x[15].cls, 2);   /* 16 is C */
    CHECK_EQ_U64(x[10].cls, 8);   /* 11 is E */
    CHECK_EQ_U64(x[9].e.tmpl, BID_IRR);
    CHECK_EQ_U64(x[9].e.imm, 0x601120);
    if (chunk == 16) {
        CHECK(fabs(x[0].mean_dist - 2.2) < 1e-9);
        CHECK(fabs(x[2].mean_dist - 3.2) < 1e-9);
        CHECK(fabs(x[6].mean_dist - 3.0) < 1e-9);
        CHECK(fabs(x[8].mean_dist - 1.2) < 1e-9);
        CHECK(fabs(x[9].mean_dist - 5.0) < 1e-9);
    }
    CHECK_EQ_U64(ab->sel.W, want_w);
    CHECK_EQ_U64(selected_set(a, ab), want_sel);
    CHECK_EQ_U64(ab->sel.ma_num, ma);
    CHECK_EQ_U64(ab->sel.aia_num, aia);
    CHECK_EQ_U64(ab->sel.iterations, iterations);
    analysis_free(a);
}

static void slides_associations(void)
{
    analysis *a = run(0.5, 16, 0);
    const analysis_block *ab = ablock(a, func_block(a, "slides_example"));
    const sel_expr *x = a->exprs + ab->first_expr;
    CHECK_EQ_U64(x[1].assoc, 0);    /* B counted by A */
    CHECK_EQ_U64(x[8].assoc, 0);    /* E counted by A (more valuable than C) */
    CHECK_EQ_U64(x[6].assoc, SEL_NONE);  /* D: nothing at distance 0 */
    CHECK_EQ_U64(x[0].aia_count, 11);
    CHECK_EQ_U64(x[2].aia_count, 3);
    analysis_free(a);
}

static void nonselective(void)
{
    analysis *a = run(0.1, 16, 1);
    const analysis_block *ab = ablock(a, func_block(a, "slides_example"));
    CHECK_EQ_U64(ab->sel.selected, 18);
    CHECK_EQ_U64(ab->sel.ma_num, 18);
    CHECK_EQ_U64(ab->sel.aia_num, 18);
    analysis_free(a);
}

/* stab_<case>_diff: the two loads are in different classes; _same: one. */
static void stability(void)
{
    analysis *a = run(1.0, 64, 0);
    unsigned cases = 0;
    for (size_t i = 0; i < a->img->nfuncs; i++) {
        const char *name = a->img->funcs[i].name;
        if (!name || strncmp(name, "stab_", 5) != 0)
            continue;
        cases++;
        const cfg_block *b = &a->cfg->blocks[a->cfg->funcs[i].first_block];
        const analysis_block *ab = ablock(a, b);
        const sel_expr *x = a->exprs + ab->first_expr;
        /* first and last expressions are the two loads */
        const sel_expr *first = &x[0], *last = &x[ab->sel.n - 1];
        int same = strstr(name, "_same") != NULL;
        if (same != bid_equal(&first->e, &last->e)) {
            fprintf(stderr, "%s: the loads are %s\n", name,
                    same ? "in different classes" : "in one class");
            check_failures++;
        }
    }
    CHECK_EQ_U64(cases, 21);
    analysis_free(a);
}

static void unusual(void)
{
    analysis *a = run(0.5, 64, 0);
    for (size_t i = 0; i < a->img->nfuncs; i++) {
        if (!a->img->funcs[i].name || strcmp(a->img->funcs[i].name, "unusual"))
            continue;
        const analysis_counts *c = &a->funcs[i];
        CHECK_EQ_U64(c->vsib, 2);        /* both gathers */
        CHECK_EQ_U64(c->avx512, 2);      /* EVEX gather and vmovdqu64 */
        CHECK_EQ_U64(c->hints, 1);       /* prefetcht0 */
        CHECK_EQ_U64(c->implicit_string, 2);  /* movsb reads and writes */
        CHECK_EQ_U64(c->implicit_stack, 2);   /* push's store, ret's load */
        /* vmovdqu64 (%rax), pushq 8(%rax), %fs:0x28 */
        CHECK_EQ_U64(c->n, 3);
        const analysis_block *ab =
            ablock(a, &a->cfg->blocks[a->cfg->funcs[i].first_block]);
        const sel_expr *tls = &a->exprs[ab->first_expr + 2];
        CHECK_EQ_U64(tls->e.tmpl, BID_RRI);
        CHECK_EQ_U64(tls->e.r1.id, BID_FS);
        CHECK_EQ_U64(tls->e.imm, 0x28);
        CHECK_EQ_U64(a->exprs[ab->first_expr].size, 64);
    }
    analysis_free(a);
}

static void scores_and_params(void)
{
    bid_scores ok = {1, 3, 5}, equal = {1, 4, 5}, order = {3, 1, 5};
    CHECK(bid_scores_valid(&ok));
    CHECK(!bid_scores_valid(&equal));    /* s1 + s2 = s3 */
    CHECK(!bid_scores_valid(&order));
    select_params p;
    select_params_default(&p);
    CHECK(select_params_check(&p) == NULL);
    p.omega = 1.5;
    CHECK(select_params_check(&p) != NULL);
    p.omega = 0.5;
    p.chunk = 0;
    CHECK(select_params_check(&p) != NULL);
    /* Figure 1's leaves with the default scores */
    bid_expr rbp4 = {BID_RRI, {6, 1, 0}, {0, 0, 0}, -4};
    bid_expr rbp24 = rbp4, rax = rbp4, rax_idx = rbp4;
    rbp24.imm = -24;
    rax.r1.id = 1;
    rax_idx.r1.id = 1;
    rax_idx.r2 = (bid_reg){2, 4, 0};
    bid_expr rbp_idx = rbp4;
    rbp_idx.r2 = (bid_reg){2, 4, 0};
    CHECK_EQ_U64(bid_distance(&rbp4, &rbp24, &ok, 16), 5);   /* s3 */
    CHECK_EQ_U64(bid_distance(&rbp4, &rbp24, &ok, 32), 0);
    CHECK_EQ_U64(bid_distance(&rbp4, &rbp_idx, &ok, 16), 1); /* s1 */
    CHECK_EQ_U64(bid_distance(&rbp4, &rax, &ok, 16), 3);     /* s2 */
    CHECK_EQ_U64(bid_distance(&rbp4, &rax_idx, &ok, 16), 4); /* s1+s2 */
    bid_expr g1 = {BID_IRR, {1, 4, 0}, {0, 0, 0}, 0x601120};
    bid_expr g2 = g1, g3 = g1, g4 = g1;
    g2.imm = 0x601060;
    g3.r2 = (bid_reg){3, 1, 0};
    g4.r1 = (bid_reg){2, 4, 0};
    CHECK_EQ_U64(bid_distance(&g1, &g2, &ok, 16), 5);         /* s3 */
    CHECK_EQ_U64(bid_distance(&g1, &g3, &ok, 16), 1);         /* s1 */
    CHECK_EQ_U64(bid_distance(&g1, &g4, &ok, 16), 3);         /* s2 */
    g4.r2 = g3.r2;
    CHECK_EQ_U64(bid_distance(&g1, &g4, &ok, 16), 4);         /* s1+s2 */
}

/* Two blocks executed 3 times and once: slides_example at omega 0.5,
 * C 16 (MA_b 10/18, AIA_b 16/18) and stab_other_reg_same (two loads of one
 * class, W = ceil(0.5 * 1) = 1: MA_b = AIA_b = 2/2).
 *   per execution: MA = (3*10/18 + 1)/4, AIA = (3*16/18 + 1)/4
 *   per access:    MA = (3*10 + 2)/(3*18 + 2), AIA = (3*16 + 2)/56 */
static void profile(void)
{
    analysis *a = run(0.5, 16, 0);
    char path[] = "/tmp/memtap-profile-XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "w");
    fprintf(f, "# block executions\n%" PRIx64 " 3\n%" PRIx64 " 1\n0x5 7\n\n",
            func_block(a, "slides_example")->start,
            func_block(a, "stab_other_reg_same")->start);
    fclose(f);
    analysis_weighted w;
    char err[128];
    CHECK(analysis_weigh(a, path, &w, err, sizeof err) == 0);
    CHECK_EQ_U64(w.entries, 3);
    CHECK_EQ_U64(w.matched, 2);
    CHECK_EQ_U64(w.executions, 4);
    CHECK(fabs(w.ma - (3.0 * 10 / 18 + 1) / 4) < 1e-9);
    CHECK(fabs(w.aia - (3.0 * 16 / 18 + 1) / 4) < 1e-9);
    CHECK(fabs(w.ma_access - 32.0 / 56) < 1e-9);
    CHECK(fabs(w.aia_access - 50.0 / 56) < 1e-9);
    f = fopen(path, "w");
    fprintf(f, "1000 many\n");
    fclose(f);
    CHECK(analysis_weigh(a, path, &w, err, sizeof err) == -1);
    CHECK(strstr(err, "line 1") != NULL);
    unlink(path);
    analysis_free(a);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_select CASES.o\n");
        return 2;
    }
    object = argv[1];
    /* instruction numbers: A=1 B=2 C=3 D=7 E=9 F=10 G=13 H=18 */
    slides(0.5, 16, 4, BIT(1) | BIT(3) | BIT(10) | BIT(13), 10, 16, 1);
    slides(0.25, 16, 2, BIT(1) | BIT(3), 8, 14, 1);
    slides(1.0, 16, 8,
           BIT(1) | BIT(2) | BIT(3) | BIT(7) | BIT(9) | BIT(10) | BIT(13) | BIT(18),
           18, 18, 3);
    slides(0.5, 4, 4, BIT(1) | BIT(2) | BIT(3) | BIT(9), 14, 14, 1);
    slides_associations();
    nonselective();
    stability();
    unusual();
    scores_and_params();
    profile();
    return CHECK_DONE();
}
