/*
 * rewrite/rewrite.h - writes an instrumented copy of an x86-64 ELF program
 * or shared library: the memory operands the static analysis selected log
 * their effective address through trampolines in a segment added to the
 * file (see rt/abi.h); the original code stays where it was.
 */
#ifndef MEMTAP_REWRITE_REWRITE_H
#define MEMTAP_REWRITE_REWRITE_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/select.h"

typedef struct rewrite_options {
    select_params params;     /* omega, chunk, scores, non-selective */
    int mode;                 /* enum mt_mode */
    int profile;              /* count executions of blocks with operands */
    int no_elision;           /* every selected operand logs itself */
    int trap_all;             /* every site through int3 (tests it) */
    int stubless;             /* no held jump through a stub (tests the
                                 windows a big file's stubs cannot serve) */
} rewrite_options;

/* What was done, for the report; every selected operand is counted once
 * as instrumented or under one reason it was not. */
typedef struct rewrite_report {
    uint64_t insns, mem_insns, exprs, selected;   /* from the analysis */
    uint64_t bypass[BYPASS_RULES];  /* selected operands the bypass rules
                                       left out (analysis_counts) */
    double ma, aia;                               /* static, whole file */
    uint64_t sites;           /* operands that log */
    uint64_t trapped;         /* of those, reached through int3 */
    uint64_t elided;          /* of those, logged by a leader's entry */
    uint64_t elided_later;    /* of those, with records due after a later
                                 operand's (memtap_site.due) */
    uint64_t windows;         /* places patched with a jump */
    uint64_t moved_back;      /* of those, starting before their first
                                 site (no room after it) */
    uint64_t extended;        /* of those, taking in a later site that
                                 had no room of its own */
    uint64_t spanning;        /* of those, across the start of a block
                                 (a chain of blocks falling into each
                                 other) */
    uint64_t padded;          /* of those, a jump taking padding after a
                                 return or jump */
    uint64_t entries;         /* branch targets inside a window, past
                                 its jump (int3 places too) */
    uint64_t traps;           /* places reached through int3 */
    uint64_t redirected;      /* direct branches sent straight to the
                                 trampoline of an int3 place */
    uint64_t shorts_moved;    /* of those, short ones moved into a window
                                 (its copy's rel32 is redirected) */
    uint64_t islands;         /* jumps to trampolines written in padding
                                 for the other short ones */
    uint64_t strings;         /* string operations (movs, stos, lods)
                                 recorded as block events through int3 */
    uint64_t displaced;       /* instructions moved to trampolines */
    uint64_t no_room;         /* an instruction that cannot move */
    uint64_t unaddressable;   /* %gs: operands, or operands the
                                 trampoline cannot name */
    uint64_t data_code;       /* in bytes code takes the address of (a
                                 table kept among instructions) */
    uint64_t undecided;       /* at an instruction the linear sweep
                                 decodes otherwise: left as it is */
    uint64_t copied;          /* bytes of code the program copies to run
                                 elsewhere (V8's builtins): left as it is */
    uint64_t inner_traps;     /* instruction starts inside a window, each
                                 an int3 into the trampoline: under its
                                 jump (its displacement carries 0xcc) or
                                 past it */
    uint64_t stubs;           /* windows whose jump goes through a stub
                                 (rewrite/stubs.h) */
    uint64_t stubless;        /* windows no stub could serve, entered
                                 through int3 (counted in traps) */
    uint64_t holes;           /* stub holes left among the trampolines
                                 (rt/abi.h) */
    uint64_t hole_stubs;      /* stubs in them */
    uint64_t prefixed;        /* windows whose jump has a prefix: the jump
                                 before shares its first byte */
    uint64_t evicted;         /* of those, windows with no site, moved for
                                 that jump only */
    uint64_t tails;           /* windows whose trampoline also runs the
                                 instruction their jump shares a byte with */
    uint64_t places_jumped;   /* int3 places entered by a short jump to an
                                 island instead (not counted in traps) */
    uint64_t entry_points, sweep_disagree; /* of the entry map */
    uint64_t saves, saves_skipped;  /* scratch registers saved, and those
                                       liveness found dead */
    uint64_t blocks, blocks_trapped, blocks_uncounted; /* --profile */
    uint64_t segment_vaddr, segment_bytes;
} rewrite_report;

/* Whether a copy, as its report says, would run through int3 too often to
 * be run in place of its file: more than a quarter of the windows whose
 * jumps need a stub (and more than REWRITE_STUBLESS_MAX) got none, which
 * happens when a file's trampolines take the addresses its jumps' stubs
 * need (chromium non-selective before stub holes: all of its 6.8 M; its
 * browser process then made tens of millions of traps of microseconds
 * each, and its GPU process was too slow to start; with holes 11 %, and
 * the page in two minutes).  1 with the reason in why, else 0. */
#define REWRITE_STUBLESS_MAX 100000
int rewrite_too_slow(const rewrite_report *rep, char *why, size_t cap);

/* Writes the instrumented copy of in to out (never in itself).  Returns 0,
 * or -1 with the reason in err. */
int rewrite_file(const char *in, const char *out, const rewrite_options *o,
                 rewrite_report *rep, char *err, size_t errcap);

/* The identity a profile names a file by: FNV-1a of its bytes, or for a
 * copy memtap instrument wrote, its original's (kept in the header).
 * Returns 0 or -1. */
int rewrite_source_id(const char *path, uint64_t *id);
/* Whether copy is a rewritten copy (of this version) of orig, by what
 * both carry cheaply: the same GNU build-id, or for files without one the
 * hash of orig's contents its header holds.  1, 0, or -1 when either
 * cannot be read. */
int rewrite_is_copy_of(const char *orig, const char *copy);

/* Reads the rewrite header of a file memtap instrument wrote.  Returns 0,
 * or -1 when the file is not one (of this version). */
struct mt_rewrite_header;
int rewrite_read_header(const char *path, struct mt_rewrite_header *h);

#endif
