/*
 * x86/emit.h - machine code for the rewriter, encoded by Zydis: the log
 * and count stubs of a rewritten file, the trampolines of its patched
 * sites, and the relocation of the instructions they displace.
 */
#ifndef MEMTAP_REWRITE_EMIT_H
#define MEMTAP_REWRITE_EMIT_H

#include <stddef.h>
#include <stdint.h>

#include "rt/abi.h"
#include "x86/insn.h"

/* Code being laid out at a known link-time address. */
typedef struct code_buf {
    uint8_t *p;
    size_t len, cap;
    uint64_t base;       /* link-time address of p[0] */
    int failed;          /* an instruction could not be encoded, or no room */
} code_buf;

static inline uint64_t code_here(const code_buf *b) { return b->base + b->len; }

/* Emits the flush stub at the buffer's end and records its offset
 * (relative to header_vaddr) in h.  flush_slot is the link-time address
 * of the flush function's slot.  Returns 0 or -1. */
int emit_stub(code_buf *b, uint64_t header_vaddr, uint64_t flush_slot,
              mt_rewrite_header *h);

/* Live scratch registers at a site, bit per register: the trampolines
 * save only these. */
enum { LIVE_RAX = 1, LIVE_RCX = 2, LIVE_RDX = 4, LIVE_ALL = 7 };
/* The scratch registers a log sequence uses (and saves when live); the
 * count stub's call uses all three. */
enum { LOG_USES = LIVE_RCX | LIVE_RDX };

/* The part of every log sequence that is the same but for its site and
 * where it lies: encoded once, copied and patched per site (the
 * encoder's work had made libc's non-selective copy 0.17 s slower). */
enum { LOG_REFS = 5 };  /* the cursor slot's three loads, the tag's, the call */
typedef struct log_template {
    uint8_t bytes[128];
    size_t len;
    size_t at[LOG_REFS], end[LOG_REFS]; /* rel32 fields: where, and where
                                           their instructions end */
    size_t site_at;        /* the site's disp32 */
    mt_log_shape shape;    /* what the copy's header says of it */
} log_template;

/* Encodes t; 0 or -1. */
int log_template_init(log_template *t);

/* What a log sequence refers to, at link-time addresses: the flush stub
 * and the header's cursor and tag slots; and its template. */
typedef struct log_refs {
    uint64_t stub, cursor_slot, tag_slot;
    log_template seq;
} log_refs;

/* Whether a log sequence can compute the operand's address: not %gs:,
 * and not a 64-bit absolute address (movabs; lea takes 32 bits). */
int emit_log_addressable(const x86_mem *m);

/* Emits the logging of one memory operand of insn (site index `site`),
 * which saves the live ones of rcx and rdx.  Returns 0, or -1 when the
 * operand's address cannot be computed here (emit_log_addressable). */
int emit_log(code_buf *b, const x86_insn *insn, const x86_mem *m,
             uint32_t site, const log_refs *to, unsigned live);

/* Emits the count stub (--profile) and records its offset and the
 * counters slot's in h. */
/* The start stub of rt/abi.h, which ends in a jump to init. */
int emit_start_stub(code_buf *b, uint64_t header_vaddr, uint64_t start_slot,
                    uint64_t init, mt_rewrite_header *h);
int emit_count_stub(code_buf *b, uint64_t header_vaddr, uint64_t counters_slot,
                    mt_rewrite_header *h);
/* Emits the counting of one execution of block `block`. */
int emit_count(code_buf *b, uint32_t block, uint64_t count_stub, unsigned live);

/* Emits the indirect call insn so that it returns to the original next
 * instruction.  Returns 0, or -1 for an operand it cannot move (see
 * emit_icall_encodable). */
int emit_icall(code_buf *b, const x86_insn *insn);
/* Whether emit_icall can move insn: a call through a 64-bit register
 * other than rsp or an 8-byte memory operand (not %gs:); not a call
 * whose target the decoder could not name (call 0 of a weak symbol). */
int emit_icall_encodable(const x86_insn *insn);

/* Emits insn (originally at insn->addr) at the buffer's end: its bytes as
 * they are, re-encoded when it addresses memory relative to rip.  Returns
 * 0 or -1. */
int emit_relocated(code_buf *b, const x86_insn *insn, const uint8_t *bytes);

/* Emits a one-byte nop (where the runtime writes a trap's int3). */
int emit_nop(code_buf *b);
/* Emits a check-once slot: `jmp .+2` (eb 00), whose displacement the
 * runtime may turn into the length of the log sequence after it. */
int emit_check_slot(code_buf *b);
/* Emits a jump to target. */
int emit_jump(code_buf *b, uint64_t target);
/* Emits the conditional jump insn with its original target. */
int emit_jcc(code_buf *b, const x86_insn *insn);
/* Emits a call of target that returns to ret (the original next
 * instruction, so that returns and unwinding see the original code). */
int emit_call(code_buf *b, uint64_t target, uint64_t ret);

/* The 5-byte `jmp rel32` from `from` to `to` (|to - from| < 2 GiB). */
void encode_patch_jump(uint8_t out[5], uint64_t from, uint64_t to);

#endif
