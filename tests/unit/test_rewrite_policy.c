/*
 * test_rewrite_policy.c - which copies the cache refuses as too slow to
 * run (rewrite_too_slow): the windows of chromium's copies, whose jumps
 * found no stub (non-selective, as memtap run rewrites it: all 6,827,263;
 * selective: 2,170,961 of 5,000,618), against libLLVM-14's (1,042 of
 * 1,107,036) and chromium's with stub holes (642,007 of 5,675,103, as
 * memtap run rewrites it), and the edges of the rule: more than a
 * quarter, and more than REWRITE_STUBLESS_MAX.
 */
#include "check.h"
#include "rewrite/rewrite.h"

#include <string.h>

static int too_slow(uint64_t stubs, uint64_t stubless, char *why, size_t cap)
{
    rewrite_report rep;
    memset(&rep, 0, sizeof rep);
    rep.stubs = stubs;
    rep.stubless = stubless;
    why[0] = '\0';
    return rewrite_too_slow(&rep, why, cap);
}

int main(void)
{
    char why[256];
    CHECK(too_slow(0, 6827263, why, sizeof why) == 1);
    CHECK(too_slow(2829657, 2170961, why, sizeof why) == 1);
    CHECK(strstr(why, "2170961 of its 5000618 windows") != NULL);
    CHECK(too_slow(1105994, 1042, why, sizeof why) == 0);
    CHECK(why[0] == '\0');
    CHECK(too_slow(5033096, 642007, why, sizeof why) == 0);
    /* a quarter exactly, or few windows however many of them: run */
    CHECK(too_slow(3 * (REWRITE_STUBLESS_MAX + 1), REWRITE_STUBLESS_MAX + 1, why, sizeof why) == 0);
    CHECK(too_slow(3 * (REWRITE_STUBLESS_MAX + 1) - 1, REWRITE_STUBLESS_MAX + 1, why,
                   sizeof why) == 1);
    CHECK(too_slow(0, REWRITE_STUBLESS_MAX, why, sizeof why) == 0);
    CHECK(too_slow(0, REWRITE_STUBLESS_MAX + 1, why, sizeof why) == 1);
    CHECK(too_slow(0, 0, why, sizeof why) == 0);
    if (check_failures)
        fprintf(stderr, "%d checks failed\n", check_failures);
    return check_failures != 0;
}
