/*
 * select.c - classes, distances, values, the iterative knapsack and the
 * MA/AIA accounting of one basic block.
 *
 * The knapsack follows the paper's queue formulation (section III-F):
 * representatives in decreasing value (ties: program order); each
 * iteration walks the queue, takes a representative unless it is at
 * distance zero from one already taken in this iteration (it is frozen),
 * and stops when the knapsack is full.  Frozen representatives are
 * reconsidered in the next iteration, among those still unselected.
 */
#define _GNU_SOURCE
#include "analysis/select.h"

#include <math.h>
#include <stdlib.h>

void select_params_default(select_params *p)
{
    p->omega = 0.25;
    p->chunk = 64;
    p->scores.s1 = 1;
    p->scores.s2 = 3;
    p->scores.s3 = 5;
    p->nonselective = 0;
    p->implicit = 0;
    p->bypass = 0;
    p->nignore = 0;
    p->ntested = 0;
}

const char *select_params_check(const select_params *p)
{
    if (!(p->omega >= 0.0 && p->omega <= 1.0))
        return "omega must be between 0 and 1";
    if (p->chunk == 0)
        return "the chunk size must be at least 1 byte";
    if (!bid_scores_valid(&p->scores))
        return "scores must satisfy s1 < s2 < s3 and s1 + s2 < s3";
    return NULL;
}

/* Equation (2): larger class first, then larger mean distance; program
 * order breaks ties so the result is deterministic. */
static int better(const sel_expr *a, uint32_t ia, const sel_expr *b, uint32_t ib)
{
    if (a->class_size != b->class_size)
        return a->class_size > b->class_size;
    if (a->mean_dist != b->mean_dist)
        return a->mean_dist > b->mean_dist;
    return ia < ib;
}

static int cmp_value(const void *pa, const void *pb, void *arg)
{
    const sel_expr *x = arg;
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    if (a == b)
        return 0;
    return better(&x[a], a, &x[b], b) ? -1 : 1;
}

static int zero_dist(const sel_expr *a, const sel_expr *b, const select_params *p)
{
    return a->e.tmpl == b->e.tmpl &&
           bid_distance(&a->e, &b->e, &p->scores, p->chunk) == 0;
}

static void classify(sel_expr *x, uint32_t n, uint32_t *reps, uint32_t *m)
{
    *m = 0;
    for (uint32_t i = 0; i < n; i++) {
        x[i].cls = i;
        x[i].rep = 1;
        for (uint32_t k = 0; k < *m; k++) {
            if (bid_equal(&x[reps[k]].e, &x[i].e)) {
                x[i].cls = reps[k];
                x[i].rep = 0;
                break;
            }
        }
        if (x[i].rep)
            reps[(*m)++] = i;
        x[x[i].cls].class_size++;
    }
}

static void mean_distances(sel_expr *x, const uint32_t *reps, uint32_t m,
                           const select_params *p)
{
    for (uint32_t a = 0; a < m; a++) {
        sel_expr *e = &x[reps[a]];
        uint64_t sum = 0, cnt = 0;
        for (uint32_t b = 0; b < m; b++) {
            const sel_expr *f = &x[reps[b]];
            if (a == b || f->e.tmpl != e->e.tmpl)
                continue;
            sum += bid_distance(&e->e, &f->e, &p->scores, p->chunk);
            cnt++;
        }
        e->mean_dist = cnt ? (double)sum / (double)cnt : 0.0;
    }
}

/* Steps A-C, repeated until the knapsack holds W representatives. */
static uint32_t knapsack(sel_expr *x, uint32_t *queue, uint32_t m, uint32_t W,
                         uint32_t *taken, const select_params *p)
{
    uint32_t in = 0, iter = 0;
    while (in < W && m > 0) {
        iter++;
        uint32_t ntaken = 0, left = 0;
        for (uint32_t q = 0; q < m; q++) {
            uint32_t i = queue[q];
            int frozen = in == W;
            for (uint32_t t = 0; t < ntaken && !frozen; t++)
                frozen = zero_dist(&x[i], &x[taken[t]], p);
            if (frozen) {
                queue[left++] = i;
                continue;
            }
            taken[ntaken++] = i;
            x[i].selected = 1;
            x[i].iteration = (uint8_t)(iter < 255 ? iter : 255);
            in++;
        }
        m = left;
    }
    return iter;
}

/* Equation (5)'s association: each unselected representative at distance
 * zero from a selected one is counted by the most valuable such one. */
static void associate(sel_expr *x, const uint32_t *order, uint32_t m,
                      const select_params *p)
{
    for (uint32_t a = 0; a < m; a++) {
        sel_expr *e = &x[order[a]];
        if (e->selected)
            continue;
        for (uint32_t b = 0; b < m; b++) {
            sel_expr *s = &x[order[b]];
            if (s->selected && zero_dist(e, s, p)) {
                e->assoc = order[b];
                s->aia_count += e->class_size;
                break;
            }
        }
    }
}

int select_block(sel_expr *x, uint32_t n, const select_params *p,
                 sel_block *out)
{
    *out = (sel_block){.n = n};
    for (uint32_t i = 0; i < n; i++) {
        x[i].selected = x[i].iteration = 0;
        x[i].class_size = x[i].aia_count = 0;
        x[i].assoc = SEL_NONE;
        x[i].mean_dist = 0.0;
    }
    if (n == 0)
        return 0;
    uint32_t *reps = malloc(3 * (size_t)n * sizeof *reps);
    if (!reps)
        return -1;
    uint32_t *order = reps + n, *taken = reps + 2 * n, m;
    classify(x, n, reps, &m);
    mean_distances(x, reps, m, p);
    for (uint32_t k = 0; k < m; k++)
        order[k] = reps[k];
    qsort_r(order, m, sizeof *order, cmp_value, x);
    out->m = m;
    if (p->nonselective) {
        out->W = n;
        for (uint32_t i = 0; i < n; i++)
            x[i].selected = x[i].iteration = 1;
        out->iterations = 1;
    } else {
        out->W = (uint32_t)ceil(p->omega * (double)m);
        if (out->W > m)
            out->W = m;
        for (uint32_t k = 0; k < m; k++)
            reps[k] = order[k];
        out->iterations = knapsack(x, reps, m, out->W, taken, p);
        associate(x, order, m, p);
    }
    for (uint32_t k = 0; k < m; k++) {
        sel_expr *e = &x[order[k]];
        if (!e->selected)
            continue;
        e->aia_count += e->class_size;
        out->ma_num += e->class_size;
        out->aia_num += e->aia_count;
    }
    for (uint32_t i = 0; i < n; i++)
        out->selected += x[i].selected;
    if (p->nonselective)
        out->ma_num = out->aia_num = n;
    free(reps);
    return 0;
}
