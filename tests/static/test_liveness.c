/*
 * test_liveness.c - the rewriter's liveness across blocks on the functions
 * of lk_live_edges_asm.S (linked into lk_live_edges), against what each
 * function's comment there works out by hand: which of rax, rcx and rdx
 * are live on its entry.
 */
#include <stdint.h>
#include <string.h>

#include "../unit/check.h"
#include "analysis/analysis.h"
#include "x86/emit.h"
#include "rewrite/liveness.h"

static uint64_t entry_of(const analysis *a, const char *name)
{
    for (size_t i = 0; i < a->img->nfuncs; i++)
        if (a->img->funcs[i].name && strcmp(a->img->funcs[i].name, name) == 0)
            return a->img->funcs[i].start;
    fprintf(stderr, "no function %s\n", name);
    check_failures++;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_liveness lk_live_edges\n");
        return 2;
    }
    select_params p;
    select_params_default(&p);
    analysis *a = NULL;
    CHECK(analysis_run(argv[1], &p, &a) == 0);
    if (!a)
        return 1;
    liveness lv;
    CHECK(liveness_init(&lv, a->cfg) == 0 && liveness_solve(&lv, a) == 0);
    static const struct {
        const char *func;
        unsigned live;
    } want[] = {
        { "after_branch", LIVE_RCX | LIVE_RDX },
        { "loop_sum", LIVE_RCX },
        { "jump_back", LIVE_RCX | LIVE_RDX },
        { "tail", LIVE_RCX | LIVE_RDX },
        { "before_call", LIVE_RCX | LIVE_RDX },
        { "through_pointer", LIVE_ALL },
        { "falls_in", LIVE_RDX },
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        unsigned got = liveness_at(&lv, entry_of(a, want[i].func));
        if (got != want[i].live) {
            fprintf(stderr, "%s: live on entry %u, expected %u\n",
                    want[i].func, got, want[i].live);
            check_failures++;
        }
    }
    /* not a block's start: all live */
    CHECK_EQ_U64(liveness_at(&lv, entry_of(a, "after_branch") + 1), LIVE_ALL);
    liveness_free(&lv);
    analysis_free(a);
    return CHECK_DONE();
}
