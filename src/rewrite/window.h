/*
 * rewrite/window.h - where a patch window fits among the instructions of
 * a chain of blocks (window.c): which instructions can move into a
 * trampoline, and the window that starts at a site or before it.
 * Private to rewrite/.
 */
#ifndef MEMTAP_REWRITE_WINDOW_H
#define MEMTAP_REWRITE_WINDOW_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/entries.h"
#include "rewrite/elf_input.h"
#include "x86/insn.h"

#define JMP_LEN 5             /* jmp rel32: what a window must hold */
#define JMP_PREFIX 0x48       /* REX.W, which jmp rel32 ignores: a first
                                 byte below 0x80 (window.c's shares) */

/* The instructions of a chain of blocks, as the planning reads them. */
typedef struct insn_vec {
    const x86_insn *v;
    size_t n;
    const uint8_t *start;     /* per instruction of a chain of blocks,
                                 BLOCK_*; NULL for one block */
    uint64_t pad_end;         /* after a last instruction that does not
                                 go on (ret, jmp), the end of the padding
                                 that follows it (nops, int3), which a
                                 window's jump may take; else its end */
    const entry_map *em;      /* where the file's code may be entered */
    const elf_input *in;      /* the file's bytes */
    uint64_t prefixed;        /* a window starting here has a jump with a
                                 prefix (JMP_PREFIX): the jump before it
                                 shares its first byte */
} insn_vec;

/* How a window's jump fits (plan_window's *fits), 0 when it does not. */
enum {
    WINDOW_JUMP = 1,          /* over the window, and padding after it */
    WINDOW_SHARES,            /* over its 4 bytes and the next byte */
};

enum {
    BLOCK_START = 1,          /* starts a block after the chain's first */
    BLOCK_ENTRY = 2,          /* and direct branches lead there */
};

/* The length of the jump of a window that starts at instruction s: 5, or
 * 6 with a prefix (insn_vec.prefixed). */
unsigned jump_len(const insn_vec *iv, size_t s);

/* Whether the linear sweep decodes the instruction as the graph does: it
 * starts one there and none inside it.  Only such bytes are patched. */
int agreed(const entry_map *em, const x86_insn *x);

/* Whether an instruction can move into a trampoline (*ends: it ends the
 * window, which then needs no jump back). */
int movable(const x86_insn *x, int *ends);

/* The window that starts at instruction i: whole movable instructions
 * until 5 bytes or one that ends it.  Returns its end (exclusive) and
 * whether it can take a jump (WINDOW_*, or 0): room for it, both decodings
 * agree on its instructions, and code cannot be entered under its jump
 * (nor past it but at an instruction start, which gets a trap) or in
 * padding it takes.  An instruction start under the jump's bytes gets an
 * int3 there (the jump's displacement carries 0xcc: stubs.h); none can be
 * under its last byte, so the window ends short of one that starts there,
 * and its jump shares that byte. */
size_t plan_window(const insn_vec *iv, size_t i, int *fits);

/* When no jump fits from instruction i: a window that starts at an
 * earlier instruction of the chain (not before `from`, the end of the
 * window before) and takes i in, from the latest start that has room
 * (fewest instructions moved).  Returns the start and its end in *end,
 * or i when there is none; *fits as plan_window's. */
size_t plan_earlier(const insn_vec *iv, size_t from, size_t i, size_t *end,
                    int *fits);

#endif
