/*
 * test_cache_model.c - the cache model's reuse clock against an LRU stack
 * kept by hand (a line's distance is its place in the stack, rounded down
 * to the first of its range): loops, random and skewed line streams, the
 * node the caller keeps given or not, a clock that renumbers its uses
 * many times over, and the recent lines it hands a fully associative
 * cache.
 */
#include "check.h"
#include "report/cache_model.h"

#include <stdint.h>
#include <stdlib.h>

#define MAX_LINES 2048
#define HINTED 64 /* the stack's places whose node the "cache" keeps */

typedef struct stack {
    uint64_t line[MAX_LINES]; /* the most recent first */
    uint32_t node[MAX_LINES]; /* the clock's node + 1 of each */
    size_t n;
} stack;

/* The range's first of distance d: the greatest of 0, 1, 2, 4, 8, ... and
 * mark not above it. */
static int64_t rounded(uint64_t d, uint64_t mark)
{
    uint64_t r = d < 2 ? d : 1ull << (63 - __builtin_clzll(d));
    return (int64_t)(mark <= d && mark > r ? mark : r);
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next_random(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* One use of line through both, checked; hint: give the clock the node
 * when the line is among the stack's first HINTED. */
static void use(reuse_clock *c, stack *st, uint64_t line, uint64_t mark, int hint)
{
    size_t at = 0;
    while (at < st->n && st->line[at] != line)
        at++;
    uint32_t node = hint && at < st->n && at < HINTED ? st->node[at] : 0;
    int64_t got = reuse_clock_use(c, line, &node);
    int64_t want = at == st->n ? -1 : rounded(at, mark);
    if (got != want) {
        fprintf(stderr, "line %llu at %zu: %lld, expected %lld\n", (unsigned long long)line,
                at, (long long)got, (long long)want);
        check_failures++;
    }
    if (at == st->n) {
        if (st->n == MAX_LINES)
            abort();
        st->n++;
    } else if (node != st->node[at]) {
        fprintf(stderr, "line %llu: node %u, was %u\n", (unsigned long long)line, node,
                st->node[at]);
        check_failures++;
    }
    for (size_t k = at; k > 0; k--) {
        st->line[k] = st->line[k - 1];
        st->node[k] = st->node[k - 1];
    }
    st->line[0] = line;
    st->node[0] = node;
}

/* n uses of lines drawn by `pick` from `lines` of them (spread over
 * pages of lines), with the given mark. */
static void run(uint64_t (*pick)(uint64_t, uint64_t), uint64_t lines, size_t n,
                uint64_t mark, int hint)
{
    static stack st;
    st.n = 0;
    reuse_clock c;
    reuse_clock_init(&c, mark);
    for (size_t i = 0; i < n; i++)
        use(&c, &st, pick(i, lines) * 37 + 1000, mark, hint);
    CHECK_EQ_U64(c.nnodes, st.n);
    /* the lines used last, as a fully associative cache of 100 gets them */
    cache_full f;
    CHECK(cache_full_init(&f, 100) == 0);
    CHECK(reuse_clock_recent(&c, &f) == 0);
    size_t k = 0;
    for (uint32_t s = f.head; s != UINT32_MAX && k < st.n; s = f.next[s], k++)
        CHECK_EQ_U64(f.line[s], st.line[k]);
    CHECK_EQ_U64(k, st.n < 100 ? st.n : 100);
    cache_full_free(&f);
    reuse_clock_free(&c);
}

static uint64_t cycle(uint64_t i, uint64_t lines) { return i % lines; }
static uint64_t uniform(uint64_t i, uint64_t lines) { (void)i; return next_random() % lines; }
/* most uses of a few lines, some of many */
static uint64_t skewed(uint64_t i, uint64_t lines)
{
    (void)i;
    uint64_t r = next_random();
    return r % 8 ? (r >> 8) % 16 : (r >> 8) % lines;
}
/* loops over growing windows, and back */
static uint64_t sweeps(uint64_t i, uint64_t lines)
{
    uint64_t w = 1 + (i / 4096) % lines;
    return (i * 7) % w;
}

int main(void)
{
    for (int hint = 0; hint < 2; hint++) {
        run(cycle, 700, 20000, 512, hint);
        run(uniform, 1500, 60000, 384, hint);   /* a mark no power of two */
        run(skewed, 2000, 60000, 512, hint);
        run(sweeps, 1200, 60000, 96, hint);
        run(uniform, 3, 300000, 512, hint);     /* many renumberings */
    }
    if (check_failures)
        fprintf(stderr, "%d checks failed\n", check_failures);
    return check_failures != 0;
}
