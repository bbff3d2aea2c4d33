/*
 * cfg.h - basic blocks of a whole ELF file, for the analyses and the
 * rewriter.  Per function: recursive disassembly from its entry along
 * direct branches and recognised jump tables; then the bytes no path
 * reached are scanned, padding and undecodable bytes skipped, and runs that
 * decode cleanly to a terminator are taken as code.  A block starts at a
 * function entry, a branch or table target, after any branch, call or
 * return, and after a gap; it ends at a branch, call, return or halt.
 */
#ifndef MEMTAP_ANALYSIS_CFG_H
#define MEMTAP_ANALYSIS_CFG_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/image.h"

enum {
    CFG_BLOCK_ENTRY = 1,         /* a function entry */
    CFG_BLOCK_BRANCH_TARGET = 2, /* target of a direct branch */
    CFG_BLOCK_TABLE_TARGET = 4,  /* target of a jump-table entry */
    CFG_BLOCK_GAP = 8,           /* found by scanning unreached bytes: code
                                    that only indirect jumps the walk did
                                    not resolve (or none) reach */
    CFG_BLOCK_DATA = 16,         /* decoded by the gap scan among bytes that
                                    code takes the address of (a table kept
                                    in code): data, never patched */
};

typedef struct cfg_block {
    uint64_t start, end;        /* [start, end) */
    uint32_t first_insn, ninsn; /* into cfg_program.insn_addr */
    uint32_t func;              /* index into the image's functions */
    uint8_t exit;               /* x86_flow of the last instruction */
    uint8_t flags;
} cfg_block;

typedef struct cfg_func {
    uint32_t first_block, nblocks;
} cfg_func;

typedef struct cfg_stats {
    uint64_t jump_tables, table_targets, unresolved_ijumps;
    uint64_t pointer_jumps;   /* jmp *ptr(%rip): PLT entries, tail calls */
    uint64_t undecodable_bytes, padding_bytes, overlaps, gap_entries;
} cfg_stats;

typedef struct cfg_program {
    const code_image *img;
    cfg_block *blocks;       /* by address */
    size_t nblocks;
    uint64_t *insn_addr;     /* every decoded instruction, by address */
    uint8_t *insn_len;
    size_t ninsn;
    cfg_func *funcs;         /* parallel to img->funcs */
    uint64_t *code_ptrs;     /* code addresses the data holds and direct
                                branch targets across functions, sorted */
    size_t ncode_ptrs;
    cfg_stats stats;
} cfg_program;

/* Builds the blocks of every function of img.  Returns 0 or ELF_E_NOMEM. */
int cfg_build(const code_image *img, cfg_program **out);
void cfg_free(cfg_program *p);

/* The block holding addr, or NULL. */
const cfg_block *cfg_block_at(const cfg_program *p, uint64_t addr);

#endif
