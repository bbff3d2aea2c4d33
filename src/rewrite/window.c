/*
 * rewrite/window.c - where a patch window fits (rewrite/window.h): whole
 * instructions that can move into a trampoline, 5 bytes for the jump (or
 * fewer that end the chain, and the padding after them), decoded alike by
 * the graph and the linear sweep, and no possible entry among the bytes of
 * that jump (analysis/entries.h).
 */
#include "rewrite/window.h"
#include "rewrite/emit.h"

int movable(const x86_insn *x, int *ends)
{
    *ends = 0;
    switch (x->flow) {
    case X86_FLOW_NEXT:
    case X86_FLOW_SYSCALL:
        return 1;
    case X86_FLOW_ICALL:
        *ends = 1;
        return emit_icall_encodable(x);
    case X86_FLOW_JUMP:
    case X86_FLOW_IJUMP:
    case X86_FLOW_RET:
    case X86_FLOW_CALL:
        *ends = 1;
        return 1;
    case X86_FLOW_JCC: /* loop and jrcxz have no rel32 form */
        switch (x->mnemonic) {
        case ZYDIS_MNEMONIC_LOOP: case ZYDIS_MNEMONIC_LOOPE:
        case ZYDIS_MNEMONIC_LOOPNE: case ZYDIS_MNEMONIC_JRCXZ:
        case ZYDIS_MNEMONIC_JECXZ: case ZYDIS_MNEMONIC_JCXZ:
            return 0;
        default:
            return 1;
        }
    default:
        return 0; /* hlt, ud2: nothing after them to return to */
    }
}

int agreed(const entry_map *em, const x86_insn *x)
{
    if (!(entry_bits(em, x->addr) & ENTRY_SWEEP))
        return 0;
    for (uint64_t a = x->addr + 1; a < x->addr + x->length; a++)
        if (entry_bits(em, a) & ENTRY_SWEEP)
            return 0;
    return 1;
}

/* Whether a window [s, j) may be patched: its instructions decoded alike,
 * no entry under the jump, and past the jump entries only at instruction
 * starts (each becomes a trap, emit_window); none in the padding a short
 * window's jump takes. */
static int clear(const insn_vec *iv, size_t s, size_t j)
{
    uint64_t from = iv->v[s].addr, jump_end = from + JMP_LEN;
    for (size_t m = s; m < j; m++) {
        const x86_insn *x = &iv->v[m];
        if (!agreed(iv->em, x))
            return 0;
        uint64_t a = m == s ? x->addr + 1 : x->addr;
        if (a < jump_end && entry_map_any(iv->em, a, jump_end))
            return 0;
        uint64_t in = x->addr + 1 > jump_end ? x->addr + 1 : jump_end;
        if (entry_map_any(iv->em, in, x->addr + x->length))
            return 0;
    }
    uint64_t end = iv->v[j - 1].addr + iv->v[j - 1].length;
    return end >= jump_end || !entry_map_any(iv->em, end, jump_end);
}

/* Whether a window [s, j) has room for a jump: 5 bytes of instructions,
 * or fewer that end the chain and the padding after them. */
static int room(const insn_vec *iv, size_t s, size_t j)
{
    uint64_t from = iv->v[s].addr;
    return j > s && (iv->v[j - 1].addr + iv->v[j - 1].length >= from + JMP_LEN ||
                     (j == iv->n && iv->pad_end >= from + JMP_LEN));
}

size_t plan_window(const insn_vec *iv, size_t i, int *fits)
{
    size_t j = i;
    uint64_t len = 0;
    int ends = 0, ok = 1;
    while (len < JMP_LEN && j < iv->n && ok && !ends) {
        ok = movable(&iv->v[j], &ends);
        len += iv->v[j].length;
        j++;
    }
    *fits = ok && room(iv, i, j) && clear(iv, i, j);
    return j;
}

size_t plan_earlier(const insn_vec *iv, size_t from, size_t i, size_t *end)
{
    for (size_t s = i; s-- > from;) {
        size_t j = s;
        uint64_t len = 0;
        int ends = 0, ok = 1;
        while ((len < JMP_LEN || j <= i) && j < iv->n && ok && !ends) {
            ok = movable(&iv->v[j], &ends);
            len += iv->v[j].length;
            j++;
        }
        if (!ok || j <= i)
            break; /* what stops it stops every earlier start too */
        if (room(iv, s, j) && clear(iv, s, j)) {
            *end = j;
            return s;
        }
    }
    return i;
}
