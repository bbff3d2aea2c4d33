/*
 * check.h - the few assertion macros memtap's unit tests use.  A failed
 * check prints where and what, and the test exits non-zero at the end.
 */
#ifndef MEMTAP_TESTS_CHECK_H
#define MEMTAP_TESTS_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_failures;

#define CHECK(cond)                                                          \
    do {                                                                      \
        if (!(cond)) {                                                        \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__,  \
                    #cond);                                                   \
            check_failures++;                                                 \
        }                                                                     \
    } while (0)

#define CHECK_EQ_U64(a, b)                                                   \
    do {                                                                      \
        unsigned long long va_ = (a), vb_ = (b);                              \
        if (va_ != vb_) {                                                     \
            fprintf(stderr, "%s:%d: %s == %llu, expected %s == %llu\n",       \
                    __FILE__, __LINE__, #a, va_, #b, vb_);                    \
            check_failures++;                                                 \
        }                                                                     \
    } while (0)

#define CHECK_STREQ(a, b)                                                    \
    do {                                                                      \
        const char *sa_ = (a), *sb_ = (b);                                    \
        if (strcmp(sa_, sb_) != 0) {                                          \
            fprintf(stderr, "%s:%d: \"%s\", expected \"%s\"\n", __FILE__,     \
                    __LINE__, sa_, sb_);                                      \
            check_failures++;                                                 \
        }                                                                     \
    } while (0)

#define CHECK_DONE() (check_failures ? 1 : 0)

#endif
