/*
 * rewrite/verify.c - the verifier of a rewritten copy (rewrite/verify.h).
 * It shares nothing of the planner's decisions: it decodes the original's
 * executable sections itself (x86_scan: a linear sweep, resynchronised at
 * function starts), reads the copy's bytes, trap table and trampolines as
 * they are, and checks each instruction start of the original:
 *   - its bytes are unchanged; or
 *   - it is an int3 of the trap table, or a jump into memtap's segment,
 *     and the trampoline there runs the original instructions from it
 *     (relocated: equal bytes but a rip-relative displacement that names
 *     the same address; branches to the same target or to a trampoline),
 *     in order, and jumps back to an instruction start right after them;
 *     instruction starts a jump's bytes cover are counted, and are
 *     violations where the verifier sees a way in (a direct branch or call
 *     target, a return address, the instruction after a jump or return,
 *     a function start); past the jump each must be a trap; or
 *   - it is a direct branch sent to a trampoline.
 * Every other changed byte of the executable sections must be a jump
 * written into padding (an island).  rewrite_blame reads a copy the same
 * way to tell memtap's faults from the program's.
 *
 * One file: the checks and the blame share the verifier's own sweep and
 * reading of the copy, which nothing of the rewriter may share.
 */
#define _GNU_SOURCE
#include "rewrite/verify.h"

#include "analysis/image.h"
#include "rewrite/elf_input.h"
#include "x86/insn.h"
#include "rt/abi.h"
#include "sys/bisect.h"

#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRAMP_STEPS 2048      /* instructions read of one trampoline */

/* How an original instruction leaves. */
enum { K_NEXT = 0, K_JMP, K_JCC, K_CALL, K_ICALL, K_IJMP, K_RET, K_STOP };
/* vinsn.flags */
enum { V_PADDING = 1, V_COVERED = 2, V_MEM = 4, V_MOVED = 8 };

typedef struct vinsn {
    uint64_t addr, target;    /* target: a direct branch's, else 0 */
    uint16_t mnemonic;        /* x86_insn's */
    uint8_t len, kind, flags;
} vinsn;

/* An instruction of memtap's segment, decoded once by the sweep: what
 * reading trampolines against the original needs of it. */
typedef struct seg_insn {
    uint32_t off;             /* from code_lo */
    int32_t rel;              /* a relative branch's immediate, or a
                                 rip-relative operand's displacement */
    uint16_t mnemonic;        /* x86_insn's */
    uint8_t len, disp_off;    /* disp_off: x86_scanned's disp_at */
    uint8_t op;               /* x86_op */
} seg_insn;

/* seg_insn.rel means (in the high bits of len) */
#define SEG_LEN 0x0f
#define SEG_BRANCH 0x10
#define SEG_RIP 0x20

typedef struct verifier {
    const code_image *img;
    elf_input copy;
    mt_rewrite_header h;
    const mt_trap *traps;     /* by pc */
    size_t ntraps;
    uint64_t *tramps;         /* every trap's tramp, sorted */
    uint64_t seg_lo, seg_hi;
    uint64_t code_lo, code_hi;   /* the segment's stubs and trampolines */
    struct seg_insn *seg;        /* their instructions, as a linear sweep */
    size_t nseg;                 /* of the segment finds them, by address */
    x86_decoder dec;
    vinsn *v;
    size_t n, cap;
    uint64_t lo, hi;          /* the executable sections' span */
    uint8_t *known;           /* per byte: a way in the verifier sees */
    uint8_t *explained;       /* per byte: a change accounted for */
    verify_report *rep;
} verifier;

static void violation(verifier *vr, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void violation(verifier *vr, const char *fmt, ...)
{
    verify_report *rep = vr->rep;
    if (rep->violations < VERIFY_SHOWN) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(rep->shown[rep->violations], sizeof rep->shown[0], fmt, ap);
        va_end(ap);
    }
    rep->violations++;
}

/* What a verifier reads of an instruction: full (x86_scan's default) or
 * minimal, with the memory operands looked at or not. */
static int scan(const verifier *vr, const uint8_t *p, size_t avail, uint64_t at,
                unsigned what, x86_scanned *x)
{
    return x86_scan(&vr->dec, p, avail, at, what, x);
}

static uint8_t kind_of(const x86_scanned *x)
{
    switch (x->flow) {
    case X86_FLOW_JUMP: return x->branch ? K_JMP : K_IJMP;
    case X86_FLOW_JCC: return K_JCC;
    case X86_FLOW_CALL: return x->branch ? K_CALL : K_ICALL;
    case X86_FLOW_RET: return x->op == X86_OP_SYSRET ? K_NEXT : K_RET;
    default: return x->op == X86_OP_UD2 || x->op == X86_OP_HLT ? K_STOP : K_NEXT;
    }
}

static void mark_known(verifier *vr, uint64_t a)
{
    if (a >= vr->lo && a < vr->hi)
        vr->known[a - vr->lo] = 1;
}

static int push_insn(verifier *vr, const vinsn *x)
{
    if (vr->n == vr->cap) {
        size_t cap = vr->cap ? vr->cap * 2 : 4096;
        vinsn *v = realloc(vr->v, cap * sizeof *v);
        if (!v)
            return -1;
        vr->v = v;
        vr->cap = cap;
    }
    vr->v[vr->n++] = *x;
    return 0;
}

/* The verifier's own linear sweep of one section. */
static int sweep(verifier *vr, const image_section *sec)
{
    const code_image *img = vr->img;
    size_t fi = 0;
    uint64_t a = sec->addr, end = sec->addr + sec->size;
    int after_stop = 1;
    while (a < end) {
        while (fi < img->nfuncs && img->funcs[fi].start <= a)
            fi++;
        uint64_t f = fi < img->nfuncs ? img->funcs[fi].start : UINT64_MAX;
        x86_scanned zi;
        if (scan(vr, sec->data + (a - sec->addr), end - a, a, X86_SCAN_MEMORY, &zi) != 0) {
            a++;
            after_stop = 1;
            continue;
        }
        if (a + zi.length > f) {
            a = f;
            continue;
        }
        vinsn x = { a, zi.target, zi.mnemonic, zi.length, kind_of(&zi), 0 };
        if (zi.op == X86_OP_NOP || zi.op == X86_OP_INT3)
            x.flags |= V_PADDING;
        if (zi.memory)
            x.flags |= V_MEM;
        if (after_stop && !(x.flags & V_PADDING)) {
            mark_known(vr, a);
            after_stop = 0;
        }
        if (x.target)
            mark_known(vr, x.target);
        if (x.kind == K_CALL || x.kind == K_ICALL)
            mark_known(vr, a + x.len);
        if (x.kind == K_JMP || x.kind == K_IJMP || x.kind == K_RET ||
            x.kind == K_STOP)
            after_stop = 1;
        if (push_insn(vr, &x) != 0)
            return -1;
        a += zi.length;
    }
    return 0;
}

/* The copy's bytes at a (n of them), or NULL. */
static const uint8_t *copy_at(const verifier *vr, uint64_t a, uint64_t n)
{
    int64_t off = elf_input_offset(&vr->copy, a, n);
    return off < 0 ? NULL : vr->copy.bytes + off;
}

static const mt_trap *trap_at(const verifier *vr, uint64_t pc)
{
    size_t i = vr->ntraps ? BISECT_AFTER(vr->traps, vr->ntraps, pc, pc) : 0;
    return i > 0 && vr->traps[i - 1].pc == pc ? &vr->traps[i - 1] : NULL;
}

static int is_tramp(const verifier *vr, uint64_t t)
{
    size_t i = bisect_after(vr->tramps, vr->ntraps, sizeof *vr->tramps, 0, t);
    return i > 0 && vr->tramps[i - 1] == t;
}

static int in_segment(const verifier *vr, uint64_t a)
{
    return a >= vr->seg_lo && a < vr->seg_hi;
}

/* The end of the segment's stub hole (abi.h) a lies in, or 0. */
static uint64_t hole_end(const verifier *vr, uint64_t a)
{
    uint64_t o = a - vr->seg_lo, k = o / MT_HOLE_PERIOD + 1;
    if (!in_segment(vr, a) || k < vr->h.first_hole ||
        k >= (uint64_t)vr->h.first_hole + vr->h.nholes ||
        o % MT_HOLE_PERIOD < MT_HOLE_PERIOD - MT_HOLE_SIZE)
        return 0;
    return a - o % MT_HOLE_PERIOD + MT_HOLE_PERIOD;
}

/* The index of the segment's instruction that starts at a (where a jump
 * into the segment must land: a trampoline's first, or one of its
 * instructions), or SIZE_MAX. */
static size_t segment_start(const verifier *vr, uint64_t a)
{
    if (a < vr->code_lo || a >= vr->code_hi)
        return SIZE_MAX;
    uint32_t off = (uint32_t)(a - vr->code_lo);
    size_t lo = 0, hi = vr->nseg;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (vr->seg[mid].off < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < vr->nseg && vr->seg[lo].off == off ? lo : SIZE_MAX;
}

static int push_seg(verifier *vr, size_t *cap, const seg_insn *x)
{
    if (vr->nseg == *cap) {
        size_t c = *cap ? *cap * 2 : 65536;
        seg_insn *s = realloc(vr->seg, c * sizeof *s);
        if (!s)
            return -1;
        vr->seg = s;
        *cap = c;
    }
    vr->seg[vr->nseg++] = *x;
    return 0;
}

/* Decodes the segment's code from its first stub to its trap table, one
 * instruction after the other. */
static int sweep_segment(verifier *vr, char *err, size_t cap)
{
    vr->code_lo = vr->seg_lo + vr->h.stub;
    vr->code_hi = vr->seg_lo + vr->h.traps;
    const uint8_t *p = vr->code_hi > vr->code_lo && vr->code_hi - vr->code_lo < UINT32_MAX
                           ? copy_at(vr, vr->code_lo, vr->code_hi - vr->code_lo)
                           : NULL;
    size_t segcap = 0;
    if (!p)
        return rewrite_fail(err, cap, "the copy's segment is damaged");
    for (uint64_t a = vr->code_lo; a < vr->code_hi;) {
        uint64_t hole = hole_end(vr, a);
        if (hole) { /* stubs: through_stub reads them */
            a = hole;
            continue;
        }
        x86_scanned zi;
        if (scan(vr, p + (a - vr->code_lo), vr->code_hi - a, a, X86_SCAN_MINIMAL, &zi) != 0) {
            a++; /* zero fill between pieces */
            continue;
        }
        seg_insn x = { (uint32_t)(a - vr->code_lo), 0, zi.mnemonic, zi.length,
                       zi.disp_at, zi.op };
        uint64_t t = zi.target, r = zi.rip;
        if (t || r) {
            x.rel = (int32_t)((t ? t : r) - (a + zi.length));
            x.len |= t ? SEG_BRANCH : SEG_RIP;
        }
        if (push_seg(vr, &segcap, &x) != 0)
            return rewrite_fail(err, cap, "out of memory");
        a += zi.length;
    }
    return 0;
}

/* What reading a trampoline needs of the segment's instruction j. */
typedef struct seen {
    uint64_t target, rip;     /* as x86_scanned's */
    uint16_t mnemonic;
    uint8_t len, disp_off, op;
} seen;

static seen seen_at(const verifier *vr, size_t j)
{
    const seg_insn *x = &vr->seg[j];
    uint64_t at = vr->code_lo + x->off, len = x->len & SEG_LEN;
    uint64_t to = at + len + (uint64_t)(int64_t)x->rel;
    return (seen){ (x->len & SEG_BRANCH) ? to : 0, (x->len & SEG_RIP) ? to : 0,
                   x->mnemonic, (uint8_t)len, x->disp_off, x->op };
}

/* Whether a branch of the copy leads where the original's did: the same
 * place, or the trampoline of a trap (the rewriter sends branches to an
 * int3 site there). */
static int same_target(const verifier *vr, uint64_t copy_t, uint64_t orig_t)
{
    return copy_t == orig_t || is_tramp(vr, copy_t);
}

/* Whether the copy's instruction at `at` is the original o moved there.
 * Calls are emulated: a lea of the return address, then a jump (direct)
 * or a ret (indirect); *saw_ret remembers the lea. */
static int same_insn(const verifier *vr, const vinsn *o, uint64_t at,
                     const seen *zi, int *saw_ret)
{
    switch (o->kind) {
    case K_JCC:
    case K_JMP:
        return zi->mnemonic == o->mnemonic && same_target(vr, zi->target, o->target);
    case K_CALL:
    case K_ICALL:
        if (zi->op == X86_OP_LEA && zi->rip == o->addr + o->len) {
            *saw_ret = 1;
            return 0;
        }
        if (!*saw_ret)
            return 0;
        return o->kind == K_CALL
                   ? zi->op == X86_OP_JMP && same_target(vr, zi->target, o->target)
                   : zi->op == X86_OP_RET;
    default:
        break;
    }
    size_t avail;
    const uint8_t *ob = image_code(vr->img, o->addr, &avail);
    const uint8_t *cb = copy_at(vr, at, o->len);
    if (!ob || !cb || zi->len != o->len)
        return 0;
    if (memcmp(ob, cb, o->len) == 0)
        return 1;
    /* relocated: only the displacement differs, naming the same address */
    x86_scanned oz;
    if (scan(vr, ob, o->len, o->addr, X86_SCAN_MINIMAL, &oz) != 0 ||
        oz.disp_size != 32 || zi->disp_off != oz.disp_at)
        return 0;
    uint8_t d = oz.disp_at;
    return memcmp(ob, cb, d) == 0 &&
           memcmp(ob + d + 4, cb + d + 4, o->len - d - 4u) == 0 &&
           oz.rip == zi->rip && zi->rip != 0;
}

static int ends_window(const vinsn *o)
{
    return o->kind == K_JMP || o->kind == K_IJMP || o->kind == K_RET ||
           o->kind == K_CALL || o->kind == K_ICALL;
}

/* Reads the trampoline at t against the original instructions from i:
 * how many it runs, in order, before it leaves for the original code
 * (*end: where; it must be right after them), or -1. */
static long run_of(verifier *vr, uint64_t t, size_t i, uint64_t *end)
{
    size_t k = i, j = segment_start(vr, t);
    int saw_ret = 0;
    if (j == SIZE_MAX)
        return -1;
    int jumped = 0; /* to the trampoline the last jump goes to */
    for (int step = 0; step < TRAMP_STEPS && j < vr->nseg; step++, j++) {
        seen zi = seen_at(vr, j);
        if (step && !jumped &&
            vr->seg[j].off != vr->seg[j - 1].off + (vr->seg[j - 1].len & SEG_LEN))
            return -1; /* bytes that decode as nothing */
        jumped = 0;
        t = vr->code_lo + vr->seg[j].off;
        if (k < vr->n && same_insn(vr, &vr->v[k], t, &zi, &saw_ret)) {
            saw_ret = 0;
            vr->v[k].flags |= V_MOVED;
            vr->rep->relocated++;
            k++;
            if (ends_window(&vr->v[k - 1])) {
                *end = vr->v[k - 1].addr + vr->v[k - 1].len;
                return (long)(k - i);
            }
        } else if (zi.op == X86_OP_JMP) {
            uint64_t back = zi.target;
            if (back && !in_segment(vr, back)) {
                *end = back;
                return k > i && back == vr->v[k - 1].addr + vr->v[k - 1].len
                           ? (long)(k - i) : -1;
            }
            size_t to = back && is_tramp(vr, back) ? segment_start(vr, back) : SIZE_MAX;
            if (to != SIZE_MAX) { /* on in the next instruction's trampoline:
                                     the next bytes, or past a stub hole */
                j = to - 1;
                jumped = 1;
            }
        }
    }
    return -1;
}

static void explain(verifier *vr, uint64_t from, uint64_t to)
{
    for (uint64_t a = from; a < to; a++)
        if (a >= vr->lo && a < vr->hi)
            vr->explained[a - vr->lo] = 1;
}

/* A jump at instruction i into the trampoline at t.  The instruction
 * starts under its bytes are the window's, each an int3 of the trap
 * table (check_start), or padding; or the jump ends one byte into the
 * next instruction, which it shares as it is: that one is checked as any
 * other, but the runtime must not write an int3 there.  With `or_island`
 * a jump whose trampoline does not run the instructions may be the jump
 * before's last byte and an island after it (padding no way in reaches:
 * check_changes finds the island). */
static void check_jump(verifier *vr, size_t i, uint64_t t, unsigned len, int or_island)
{
    const vinsn *s = &vr->v[i];
    uint64_t end = 0, jump_end = s->addr + len;
    if (run_of(vr, t, i, &end) <= 0) {
        if (!or_island)
            violation(vr, "0x%" PRIx64 ": the trampoline its jump leads to does "
                      "not run the original instructions", s->addr);
        return;
    }
    vr->rep->jumps++;
    explain(vr, s->addr, end > jump_end ? end : jump_end);
    for (size_t j = i + 1; j < vr->n && vr->v[j].addr < jump_end; j++) {
        vinsn *x = &vr->v[j];
        if (x->addr == jump_end - 1 && !trap_at(vr, x->addr))
            vr->rep->shared++; /* its bytes the file's: checked as a start */
        else if (x->addr < end || (x->flags & V_PADDING))
            x->flags |= V_COVERED;
        else
            violation(vr, "0x%" PRIx64 ": the jump at 0x%" PRIx64 " takes "
                      "bytes of an instruction after its window",
                      x->addr, s->addr);
    }
}

/* Whether the copy has a jmp rel32 at a: its target in *to. */
static int jump_at(const verifier *vr, uint64_t a, uint64_t *to)
{
    const uint8_t *b = copy_at(vr, a, 5);
    int32_t rel;
    if (!b || b[0] != 0xe9)
        return 0;
    memcpy(&rel, b + 1, 4);
    *to = a + 5 + (uint64_t)(int64_t)rel;
    return 1;
}

/* Where a jump to t goes: t, or for a stub of memtap's (a jump past the
 * segment or in one of its holes, rewrite/stubs.h) the stub's target. */
static uint64_t through_stub(const verifier *vr, uint64_t t)
{
    uint64_t to;
    if ((t < vr->seg_hi && !hole_end(vr, t)) || !jump_at(vr, t, &to))
        return t;
    return in_segment(vr, to) && !hole_end(vr, to) ? to : t;
}

/* A jump written into padding at instruction i (an island a short
 * branch is sent through to a trampoline): the padding it takes is
 * entered no other way. */
static void island(verifier *vr, size_t i)
{
    uint64_t at = vr->v[i].addr;
    vr->rep->islands++;
    explain(vr, at, at + 5);
    for (size_t j = i + 1; j < vr->n && vr->v[j].addr < at + 5; j++) {
        if (!(vr->v[j].flags & V_PADDING))
            violation(vr, "0x%" PRIx64 ": the jump written into padding at 0x%"
                      PRIx64 " takes bytes of an instruction", vr->v[j].addr, at);
        vr->v[j].flags |= V_COVERED;
    }
}

/* A direct branch of the original whose copy leads to a trampoline. */
static int redirected(verifier *vr, const vinsn *s, const uint8_t *cb)
{
    x86_scanned zi;
    if ((s->kind != K_JMP && s->kind != K_JCC && s->kind != K_CALL) ||
        scan(vr, cb, s->len, s->addr, X86_SCAN_MINIMAL, &zi) != 0 ||
        zi.mnemonic != s->mnemonic || zi.length != s->len)
        return 0;
    uint64_t t = zi.target;
    if (!is_tramp(vr, t)) { /* a short branch: through an island */
        const uint8_t *ib = copy_at(vr, t, 5);
        x86_scanned iz;
        if (!ib || scan(vr, ib, 5, t, X86_SCAN_MINIMAL, &iz) != 0 ||
            iz.op != X86_OP_JMP || !is_tramp(vr, iz.target))
            return 0;
    }
    vr->rep->redirected++;
    explain(vr, s->addr, s->addr + s->len);
    return 1;
}

static void check_start(verifier *vr, size_t i)
{
    vinsn *s = &vr->v[i];
    size_t avail;
    const uint8_t *ob = image_code(vr->img, s->addr, &avail);
    const uint8_t *cb = copy_at(vr, s->addr, s->len);
    vr->rep->starts++;
    vr->rep->mem_insns += (s->flags & V_MEM) != 0;
    if (!ob || !cb) {
        violation(vr, "0x%" PRIx64 ": not in the copy's loaded bytes", s->addr);
        return;
    }
    const mt_trap *trap = trap_at(vr, s->addr);
    uint64_t end;
    if (trap && trap->jumped) { /* a short jump to an island */
        uint64_t to = 0;
        if (s->len < 2 || cb[0] != 0xeb ||
            !jump_at(vr, s->addr + 2 + (uint64_t)(int64_t)(int8_t)cb[1], &to) ||
            to != trap->tramp || memcmp(cb + 2, ob + 2, s->len - 2u) != 0)
            violation(vr, "0x%" PRIx64 ": not a short jump to a jump to its "
                      "trampoline", s->addr);
        else if (run_of(vr, trap->tramp, i, &end) <= 0)
            violation(vr, "0x%" PRIx64 ": the trampoline its short jump leads to "
                      "does not run the original instruction", s->addr);
        vr->rep->traps++;
        explain(vr, s->addr, s->addr + 2);
    } else if (trap) {
        if (cb[0] != 0xcc && memcmp(cb, ob, s->len) != 0)
            violation(vr, "0x%" PRIx64 ": a trap over changed bytes", s->addr);
        else if (run_of(vr, trap->tramp, i, &end) <= 0)
            violation(vr, "0x%" PRIx64 ": the trampoline its trap leads to "
                      "does not run the original instruction", s->addr);
        vr->rep->traps++;
        explain(vr, s->addr, s->addr + 1);
    } else if (memcmp(cb, ob, s->len) == 0) {
        vr->rep->unchanged++;
    } else if (s->flags & V_COVERED) {
        vr->rep->covered++;
        if (!(s->flags & V_PADDING))
            violation(vr, "0x%" PRIx64 ": an instruction start under the "
                      "bytes of a jump, and no int3", s->addr);
        else if (vr->known[s->addr - vr->lo])
            violation(vr, "0x%" PRIx64 ": code may be entered here, under the "
                      "bytes of a jump", s->addr);
    } else if (cb[0] == 0xe9 || (cb[0] == 0x48 && s->len >= 2 && cb[1] == 0xe9)) {
        unsigned p = cb[0] == 0x48; /* a REX.W prefix: the jump before
                                       shares its first byte */
        const uint8_t *jb = copy_at(vr, s->addr, 5 + p);
        int32_t rel;
        if (!jb) {
            violation(vr, "0x%" PRIx64 ": a jump past the loaded bytes", s->addr);
            return;
        }
        memcpy(&rel, jb + 1 + p, 4);
        uint64_t t = through_stub(vr, s->addr + 5 + p + (uint64_t)(int64_t)rel);
        if (redirected(vr, s, cb))
            return;
        if (!p && (s->flags & V_PADDING) && is_tramp(vr, t))
            island(vr, i);
        else if (in_segment(vr, t))
            check_jump(vr, i, t, 5 + p, /* a prefix there that is the jump
                                           before's byte, in padding */
                       p && (s->flags & V_PADDING) && !vr->known[s->addr - vr->lo]);
        else if ((s->flags & V_PADDING) && !vr->known[s->addr - vr->lo])
            ; /* inside a jump written into padding from an earlier byte,
                 whose displacement has an 0xe9 here: check_changes */
        else
            violation(vr, "0x%" PRIx64 ": changed into a jump outside memtap's "
                      "segment", s->addr);
    } else if ((s->flags & V_PADDING) && !vr->known[s->addr - vr->lo]) {
        /* padding no way in reaches: its changed bytes must be jumps
         * written into it (check_changes) */
    } else if (!redirected(vr, s, cb)) {
        violation(vr, "0x%" PRIx64 ": changed, but neither a jump to a "
                  "trampoline, a trap nor a redirected branch", s->addr);
    }
}

/* Changed bytes no start explained: jumps written into padding. */
static void check_changes(verifier *vr)
{
    size_t i = 0;
    for (uint64_t a = vr->lo; a < vr->hi; a++) {
        size_t avail;
        const uint8_t *ob = image_code(vr->img, a, &avail);
        const uint8_t *cb = ob ? copy_at(vr, a, 1) : NULL;
        if (!ob || !cb || *ob == *cb || vr->explained[a - vr->lo])
            continue;
        while (i < vr->n && vr->v[i].addr + vr->v[i].len <= a)
            i++;
        uint64_t to;
        int in_padding = i < vr->n && vr->v[i].addr <= a &&
                         (vr->v[i].flags & V_PADDING);
        for (size_t j = i; in_padding && j < vr->n && vr->v[j].addr < a + 5; j++)
            in_padding = (vr->v[j].flags & V_PADDING) != 0;
        if (in_padding && jump_at(vr, a, &to) && is_tramp(vr, to)) {
            vr->rep->islands++;
            explain(vr, a, a + 5);
            a += 4;
            continue;
        }
        violation(vr, "0x%" PRIx64 ": a byte changed that no patch explains", a);
        explain(vr, a, a + 1);
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The copy's header, segment and trap table. */
static int open_copy(verifier *vr, const char *copy, char *err, size_t cap)
{
    if (elf_input_map(copy, &vr->copy, err, cap) != 0)
        return -1;
    if (elf_input_header(&vr->copy, &vr->h) != 0)
        return rewrite_fail(err, cap, "%s: not a copy memtap instrument wrote "
                            "(of this version)", copy);
    vr->seg_lo = vr->h.segment_vaddr;
    vr->seg_hi = vr->h.segment_vaddr + vr->h.segment_size;
    vr->ntraps = vr->h.ntraps;
    const uint8_t *t = vr->ntraps ? copy_at(vr, vr->seg_lo + vr->h.traps,
                                            vr->ntraps * sizeof(mt_trap))
                                  : NULL;
    vr->tramps = calloc(vr->ntraps + 1, sizeof *vr->tramps);
    if ((vr->ntraps && !t) || !vr->tramps)
        return rewrite_fail(err, cap, "%s: its trap table is damaged", copy);
    vr->traps = (const mt_trap *)(const void *)t;
    for (size_t i = 0; i < vr->ntraps; i++)
        vr->tramps[i] = vr->traps[i].tramp;
    qsort(vr->tramps, vr->ntraps, sizeof *vr->tramps, cmp_u64);
    return 0;
}

#define START_STEPS 16         /* instructions of the start stub */

/* The copy's DT_INIT: the original's, or the start stub, which must end
 * in a jump to the original's (rt/abi.h). */
static void check_start_stub(verifier *vr, const char *original)
{
    elf_input orig = { .fd = -1 };
    char err[256];
    uint64_t was = 0, now = 0;
    int had = elf_input_map(original, &orig, err, sizeof err) == 0 &&
              elf_input_check(&orig, 0, err, sizeof err) == 0 &&
              elf_input_dt_init(&orig, &was) >= 0;
    int has = elf_input_dt_init(&vr->copy, &now) >= 0;
    elf_input_unmap(&orig);
    if (had != has)
        violation(vr, "DT_INIT: %s", has ? "added" : "gone");
    if (!has || now == was)
        return;
    size_t j = vr->h.start_stub && now == vr->seg_lo + vr->h.start_stub
                   ? segment_start(vr, now)
                   : SIZE_MAX;
    for (size_t k = 0; j != SIZE_MAX && j + k < vr->nseg && k < START_STEPS; k++) {
        seen x = seen_at(vr, j + k);
        if (x.op == X86_OP_JMP) {
            if (x.target != was)
                break;
            vr->rep->start_stub = 1;
            return;
        }
    }
    violation(vr, "DT_INIT: 0x%" PRIx64 " is not a start stub that goes on "
              "to the original's 0x%" PRIx64, now, was);
}

static int verify(verifier *vr, char *err, size_t cap)
{
    const code_image *img = vr->img;
    vr->lo = UINT64_MAX;
    for (size_t i = 0; i < img->nsecs; i++)
        if (img->secs[i].exec && img->secs[i].data && img->secs[i].size) {
            uint64_t a = img->secs[i].addr, e = a + img->secs[i].size;
            vr->lo = a < vr->lo ? a : vr->lo;
            vr->hi = e > vr->hi ? e : vr->hi;
        }
    if (vr->lo >= vr->hi)
        return rewrite_fail(err, cap, "no executable section");
    vr->known = calloc(vr->hi - vr->lo, 1);
    vr->explained = calloc(vr->hi - vr->lo, 1);
    if (!vr->known || !vr->explained)
        return rewrite_fail(err, cap, "out of memory");
    for (size_t i = 0; i < img->nsecs; i++)
        if (img->secs[i].exec && img->secs[i].data &&
            sweep(vr, &img->secs[i]) != 0)
            return rewrite_fail(err, cap, "out of memory");
    for (size_t i = 0; i < img->nfuncs; i++)
        if (img->funcs[i].source != FUNC_GAP)
            mark_known(vr, img->funcs[i].start);
    mark_known(vr, img->entry);
    for (size_t i = 0; i < vr->n; i++)
        check_start(vr, i);
    for (size_t i = 0; i < vr->n; i++)
        vr->rep->mem_moved += (vr->v[i].flags & (V_MEM | V_MOVED)) ==
                              (V_MEM | V_MOVED);
    check_changes(vr);
    return 0;
}

int rewrite_verify(const char *original, const char *copy, verify_report *rep,
                   char *err, size_t errcap)
{
    memset(rep, 0, sizeof *rep);
    verifier vr;
    memset(&vr, 0, sizeof vr);
    vr.copy.fd = -1;
    vr.rep = rep;
    code_image *img = NULL;
    int st = image_open(original, &img);
    int rc = st != 0 ? rewrite_fail(err, errcap, "%s: %s", original,
                                    elf_strerror(st)) : 0;
    vr.img = img;
    if (!rc && x86_decoder_init(&vr.dec) != 0)
        rc = rewrite_fail(err, errcap, "cannot set up the x86 decoder");
    if (!rc)
        rc = open_copy(&vr, copy, err, errcap);
    if (!rc)
        rc = sweep_segment(&vr, err, errcap);
    if (!rc)
        rc = verify(&vr, err, errcap);
    if (!rc)
        check_start_stub(&vr, original);
    free(vr.v);
    free(vr.known);
    free(vr.explained);
    free(vr.tramps);
    free(vr.seg);
    elf_input_unmap(&vr.copy);
    image_close(img);
    return rc;
}

/* The original instruction of the sweep that holds vaddr, as text. */
/* The original's swept instruction whose bytes hold vaddr, or NULL. */
static const vinsn *insn_holding(const verifier *vr, uint64_t vaddr)
{
    size_t lo = 0, hi = vr->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (vr->v[mid].addr + vr->v[mid].len <= vaddr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < vr->n && vr->v[lo].addr <= vaddr ? &vr->v[lo] : NULL;
}

static void describe_original(verifier *vr, uint64_t vaddr, char *out,
                              size_t cap)
{
    size_t avail;
    const vinsn *x = insn_holding(vr, vaddr);
    const uint8_t *ob = x ? image_code(vr->img, x->addr, &avail) : NULL;
    x86_insn insn;
    char text[96];
    if (!ob || x86_decode(&vr->dec, ob, x->len, x->addr, &insn) != 0) {
        snprintf(out, cap, "no instruction of the original there");
        return;
    }
    x86_format_relative(&insn, text, sizeof text);
    snprintf(out, cap, "the original has '%s' at 0x%" PRIx64, text, x->addr);
}

/* Whether the copy's instruction at vaddr in memtap's segment is memtap's
 * own (a log sequence's: it addresses the thread's buffer through %fs or
 * the segment's slots), not an original instruction moved there, which
 * faults where it faulted before. */
static int own_in_segment(verifier *vr, uint64_t vaddr)
{
    const uint8_t *cb = copy_at(vr, vaddr, 1);
    x86_insn insn;
    if (!cb || x86_decode(&vr->dec, cb, vr->seg_hi - vaddr, vaddr, &insn) != 0)
        return 1;
    for (uint8_t i = 0; i < insn.nvisible; i++) {
        const x86_operand *op = &insn.ops[i];
        if (op->type == X86_OPND_MEM &&
            (op->segment == X86_REG_FS ||
             (op->base == X86_REG_RIP && in_segment(vr, op->target))))
            return 1;
    }
    return 0;
}

int rewrite_blame(const char *original, const char *copy, uint64_t vaddr,
                  int sig, char *out, size_t cap)
{
    int after_trap = sig == SIGTRAP;
    verifier vr;
    verify_report rep;
    char err[256];
    memset(&vr, 0, sizeof vr);
    memset(&rep, 0, sizeof rep);
    vr.copy.fd = -1;
    vr.rep = &rep;
    code_image *img = NULL;
    int rc = image_open(original, &img) != 0 ||
             x86_decoder_init(&vr.dec) != 0
                 ? -1 : 0;
    vr.img = img;
    if (!rc)
        rc = open_copy(&vr, copy, err, sizeof err);
    for (size_t i = 0; !rc && i < img->nsecs; i++)
        if (img->secs[i].exec && img->secs[i].data &&
            sweep(&vr, &img->secs[i]) != 0)
            rc = -1;
    if (!rc) {
        uint64_t at = after_trap && vaddr ? vaddr - 1 : vaddr;
        size_t avail;
        const uint8_t *ob = image_code(img, at, &avail);
        const uint8_t *cb = copy_at(&vr, at, 1);
        int data_fault = sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE;
        if (in_segment(&vr, vaddr) && data_fault && !own_in_segment(&vr, vaddr)) {
            rc = 0; /* the program's instruction, moved */
        } else if (in_segment(&vr, vaddr)) {
            snprintf(out, cap, "in a trampoline memtap's static engine added "
                     "(segment at 0x%" PRIx64 ")", vr.seg_lo);
            rc = 1;
        } else if (after_trap && trap_at(&vr, at)) {
            char what[160];
            describe_original(&vr, at, what, sizeof what);
            snprintf(out, cap, "at an int3 memtap's runtime writes there (%s) "
                     "that its handler did not take", what);
            rc = 1;
        } else if (after_trap && ob && *ob == 0xcc && insn_holding(&vr, at) &&
                   insn_holding(&vr, at)->addr != at) {
            /* an int3 byte inside an instruction: a jump landed where the
             * original never goes */
            char what[160];
            describe_original(&vr, at, what, sizeof what);
            snprintf(out, cap, "inside an instruction (%s): a jump of the "
                     "rewritten code landed where the original never goes",
                     what);
            rc = 1;
        } else if (ob && cb && *ob != *cb) {
            char what[160];
            describe_original(&vr, at, what, sizeof what);
            snprintf(out, cap, "in code memtap's static engine changed (%s; "
                     "the copy has %02x there)", what, *cb);
            rc = 1;
        }
    }
    free(vr.v);
    free(vr.tramps);
    elf_input_unmap(&vr.copy);
    image_close(img);
    return rc;
}
