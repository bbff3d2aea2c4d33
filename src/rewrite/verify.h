/*
 * rewrite/verify.h - the verifier of a rewritten copy (verify.c): the
 * original and the copy decoded apart from the rewriter's plan, every
 * instruction start of the original checked to be enterable in the copy
 * and every changed byte explained.
 */
#ifndef MEMTAP_REWRITE_VERIFY_H
#define MEMTAP_REWRITE_VERIFY_H

#include <stddef.h>
#include <stdint.h>

#define VERIFY_SHOWN 8        /* violations described, at most */

typedef struct verify_report {
    uint64_t starts;          /* instruction starts of the original's
                                 linear sweep */
    uint64_t unchanged;       /* their bytes as in the original */
    uint64_t jumps;           /* a jump to a trampoline that runs them */
    uint64_t traps;           /* an int3 the copy's trap table sends on */
    uint64_t covered;         /* padding under a jump's bytes, entered
                                 by no way the verifier knows (any other
                                 start there is a violation but int3s) */
    uint64_t shared;          /* unchanged, their first byte the last of
                                 a jump before them */
    uint64_t redirected;      /* direct branches sent to a trampoline */
    uint64_t islands;         /* jumps written into padding */
    uint64_t relocated;       /* instructions found again in trampolines */
    uint64_t mem_insns, mem_moved; /* instructions with memory operands,
                                      those moved into trampolines */
    int start_stub;           /* DT_INIT goes through the start stub */
    uint64_t violations;
    char shown[VERIFY_SHOWN][200];
} verify_report;

/* Checks the copy memtap instrument wrote of the file at original.
 * Returns 0 (the report says what it found; violations may be > 0), or -1
 * with err when either file cannot be read as such. */
int rewrite_verify(const char *original, const char *copy, verify_report *rep,
                   char *err, size_t errcap);

/* Whether a fatal signal sig at vaddr (link-time; an int3's SIGTRAP stops
 * one byte past it) lies in what the copy changed of original: bytes that
 * differ, or memtap's segment, but for a data fault of an original
 * instruction moved there (the program's own).  Then 1, with a
 * description in out (the original instruction there and the copy's
 * byte); else 0; -1 when the files cannot be read. */
int rewrite_blame(const char *original, const char *copy, uint64_t vaddr,
                  int sig, char *out, size_t cap);

#endif
