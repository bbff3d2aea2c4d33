/*
 * rewrite/window.c - where a patch window fits (rewrite/window.h): whole
 * instructions that can move into a trampoline, 5 bytes for the jump (or
 * fewer that end the chain, and the padding after them, or 4 and the next
 * instruction's first byte), decoded alike by the graph and the linear
 * sweep, and no possible entry among the bytes of that jump
 * (analysis/entries.h).
 */
#include "rewrite/window.h"
#include "x86/emit.h"

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
        return x->op != X86_OP_LOOP;
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

unsigned jump_len(const insn_vec *iv, size_t s)
{
    return JMP_LEN + (iv->v[s].addr == iv->prefixed);
}

/* Whether the window [s, j) ends one byte short of its jump, which then
 * shares its last byte with the next instruction (whose first byte must
 * be below 0x80 when the program runs, for a jump forward: the caller's
 * to see). */
static int shares(const insn_vec *iv, size_t s, size_t j)
{
    uint64_t from = iv->v[s].addr, end = iv->v[j - 1].addr + iv->v[j - 1].length;
    uint64_t jump_end = from + jump_len(iv, s);
    return end == jump_end - 1 && elf_input_offset(iv->in, end, 1) >= 0 &&
           !(j == iv->n && iv->pad_end >= jump_end);
}

/* The window [s, j) without the instruction that starts at its jump's
 * last byte, if one does: no int3 can stand there (it would make the
 * jump go backwards), so the jump shares that byte instead. */
static size_t short_of_last_byte(const insn_vec *iv, size_t s, size_t j)
{
    for (size_t m = s + 1; m < j; m++)
        if (iv->v[m].addr == iv->v[s].addr + jump_len(iv, s) - 1)
            return m;
    return j;
}

/* Whether a window [s, j) may be patched: its instructions decoded alike,
 * no entry under the bytes its jump changes, and past the jump entries
 * only at instruction starts (each becomes a trap, emit_window); none in
 * the padding a short window's jump takes.  The instruction starts under
 * the jump get int3s its displacement carries (stubs.h). */
static int clear(const insn_vec *iv, size_t s, size_t j)
{
    uint64_t from = iv->v[s].addr, jump_end = from + jump_len(iv, s);
    uint64_t end = iv->v[j - 1].addr + iv->v[j - 1].length;
    uint64_t changed = shares(iv, s, j) ? end : jump_end;
    for (size_t m = s; m < j; m++) {
        const x86_insn *x = &iv->v[m];
        if (!agreed(iv->em, x))
            return 0;
        uint64_t a = m == s ? x->addr + 1 : x->addr;
        if (a < changed && entry_map_any(iv->em, a, changed))
            return 0;
        uint64_t in = x->addr + 1 > jump_end ? x->addr + 1 : jump_end;
        if (entry_map_any(iv->em, in, x->addr + x->length))
            return 0;
    }
    return end >= changed || !entry_map_any(iv->em, end, jump_end);
}

/* Whether a window [s, j) has room for a jump: 5 bytes of instructions
 * (6 with a prefix), one fewer and the next instruction's first, or fewer
 * that end the chain and the padding after them; and no instruction
 * start under the jump's last byte, nor under its opcode after a
 * prefix. */
static int room(const insn_vec *iv, size_t s, size_t j)
{
    uint64_t from = iv->v[s].addr, jump_end = from + jump_len(iv, s);
    if (j <= s || short_of_last_byte(iv, s, j) < j ||
        (jump_end > from + JMP_LEN && iv->v[s].length < 2))
        return 0;
    return iv->v[j - 1].addr + iv->v[j - 1].length >= jump_end ||
           (j == iv->n && iv->pad_end >= jump_end) || shares(iv, s, j);
}

static int fit(const insn_vec *iv, size_t s, size_t j)
{
    if (!room(iv, s, j) || !clear(iv, s, j))
        return 0;
    return shares(iv, s, j) ? WINDOW_SHARES : WINDOW_JUMP;
}

size_t plan_window(const insn_vec *iv, size_t i, int *fits)
{
    size_t j = i;
    uint64_t len = 0;
    int ends = 0, ok = 1;
    while (len < jump_len(iv, i) && j < iv->n && ok && !ends) {
        ok = movable(&iv->v[j], &ends);
        len += iv->v[j].length;
        j++;
    }
    j = short_of_last_byte(iv, i, j);
    *fits = ok ? fit(iv, i, j) : 0;
    return j;
}

size_t plan_earlier(const insn_vec *iv, size_t from, size_t i, size_t *end,
                    int *fits)
{
    for (size_t s = i; s-- > from;) {
        size_t j = s;
        uint64_t len = 0;
        int ends = 0, ok = 1;
        while ((len < jump_len(iv, s) || j <= i) && j < iv->n && ok && !ends) {
            ok = movable(&iv->v[j], &ends);
            len += iv->v[j].length;
            j++;
        }
        if (!ok || j <= i)
            break; /* what stops it stops every earlier start too */
        j = short_of_last_byte(iv, s, j);
        if (j > i && (*fits = fit(iv, s, j)) != 0) {
            *end = j;
            return s;
        }
    }
    return i;
}
