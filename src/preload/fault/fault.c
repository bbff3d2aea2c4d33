/*
 * fault.c - the fault engine.
 *
 * Traced pages are kept at PROT_NONE while the engine is active.  An access
 * raises SIGSEGV (SEGV_ACCERR on a page the page map marks tracked); the
 * handler decodes the instruction (x86/access.h), computes the effective address
 * of each memory operand from the saved registers, and records a load
 * and/or a store for each operand that lands in traced memory.  Most
 * instructions are then completed in the handler, the page left closed
 * (complete.c).  The others are stepped: the pages the instruction needs
 * get their rights back and the trap flag is set; the instruction
 * re-executes and the SIGTRAP that follows closes the pages and clears the
 * flag.  While such a window is open, asynchronous signals stay blocked so
 * no handler runs with pages open.
 *
 * rep movs / rep stos are emulated in the handler (one block event, no
 * per-iteration traps); other rep-prefixed string instructions are followed
 * iteration by iteration.  Pages are opened with a count (traced_set.c),
 * so a system call or block operation of one thread and an instruction
 * window of another can share a page.  Threads: mprotect is process-wide,
 * so while a stepped window is open the other threads are stopped
 * (stop_world.c); when they cannot be, the window is counted
 * (fault_exposed_windows) and reported.  This file also keeps each
 * thread's handler state: its depth in memtap's handlers, its own-mode
 * work and its window.
 *
 * One file: the SIGSEGV and SIGTRAP handlers, the completion and window
 * paths and the brackets other modules suspend share that per-thread
 * state, which no other file should see (rep string emulation, which
 * needs none of it, is fault_rep.c).
 */
#define _GNU_SOURCE
#include "fault.h"
#include "fault_insn.h"
#include "x86/insn.h"
#include "preload/signal/process_death.h"
#include "preload/signal/sigtable.h"
#include "preload/core/own_signals.h"
#include "sys/sigbits.h"
#include "sys/own_flags.h"
#include "sys/page.h"

#include "complete.h"
#include "preload/core/config.h"
#include "hot.h"
#include "preload/memmap/pagemap.h"
#include "preload/memmap/alias.h"
#include "preload/memmap/traced_set.h"
#include "preload/core/own_text.h"
#include "preload/record/tracer.h"
#include "preload/core/stop_world.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>

#define TF_FLAG 0x100ull
#define PF_INSTR 0x10 /* a page fault's error code: an instruction fetch */
#define WINDOW_PAGES 16

typedef struct window {
    int active;
    int stopped;             /* the other threads are parked */
    int rep;                 /* following a rep-prefixed instruction */
    uint64_t pc;
    traced_open_set open;
    sigset_t saved_mask;
} window;

static struct {
    int enabled;
    x86_decoder decoder;
    _Atomic uint64_t faults;
    _Atomic uint64_t stack_pages; /* pages untraced as stacks */
    _Atomic uint64_t code_pages;  /* pages untraced as code run from them */
    _Atomic uint64_t exposed;
    _Atomic int64_t first_exposed; /* why + 2 of the first, 0: none */
    int (*trap_claim)(ucontext_t *uc); /* the static engine's int3 sites */
} fault_state;

static __thread window tls_win __attribute__((tls_model("initial-exec")));
/* Depth of memtap handlers on this thread, and the pages memtap's own code
 * (or the C library working for it) touched there. */
static __thread int tls_depth __attribute__((tls_model("initial-exec")));
static __thread traced_open_set tls_own __attribute__((tls_model("initial-exec")));
static __thread int tls_own_mode __attribute__((tls_model("initial-exec")));
/* The own mode's depth of the program's call in progress (0: none) */
static __thread int tls_program_call __attribute__((tls_model("initial-exec")));
/* The mask a block operation's exclusive bracket replaced, and its depth. */
static __thread sigset_t tls_exclusive_mask __attribute__((tls_model("initial-exec")));
static __thread int tls_exclusive __attribute__((tls_model("initial-exec")));
/* Faults and emulated system calls of this thread: what its code paid. */
static __thread uint64_t tls_traps __attribute__((tls_model("initial-exec")));

int fault_enabled(void) { return fault_state.enabled; }
void fault_set_trap_claim(int (*claim)(ucontext_t *uc)) { fault_state.trap_claim = claim; }
uint64_t fault_thread_traps(void) { return tls_traps; }
void fault_thread_trapped(void) { tls_traps++; }

void fault_note_exposed(long why)
{
    if (!world_others_registered())
        return;
    atomic_fetch_add(&fault_state.exposed, 1);
    int64_t none = 0;
    atomic_compare_exchange_strong(&fault_state.first_exposed, &none, why + 2);
}
int64_t fault_first_exposed(void) { return atomic_load(&fault_state.first_exposed); }
uint64_t fault_count(void) { return atomic_load(&fault_state.faults); }
uint64_t fault_stack_pages(void) { return atomic_load(&fault_state.stack_pages); }
uint64_t fault_code_pages(void) { return atomic_load(&fault_state.code_pages); }
uint64_t fault_exposed_windows(void) { return atomic_load(&fault_state.exposed); }

/* ---- decoding and recording ---- */

/* Decodes the instruction at uc's pc; *bytes (when asked) the bytes it
 * was decoded from: the program's code, or a hot site's own bytes when
 * the code at pc is a site's (the live code may have been read halfway
 * through its patching, hot.h). */
static int decode(const ucontext_t *uc, x86_access_insn *insn,
                  const uint8_t **bytes)
{
    const uint8_t *pc = (const uint8_t *)uc->uc_mcontext.gregs[REG_RIP];
    size_t room = PAGE - ((uintptr_t)pc & (PAGE - 1));
    if (room > X86_MAX_LENGTH)
        room = X86_MAX_LENGTH;
    int rc = x86_access_decode(&fault_state.decoder, pc, room, insn);
    if (rc != 0) /* an instruction that runs into the next page */
        rc = x86_access_decode(&fault_state.decoder, pc, X86_MAX_LENGTH, insn);
    const uint8_t *own = hot_site_bytes((uint64_t)(uintptr_t)pc); /* after the read */
    if (own)
        rc = x86_access_decode(&fault_state.decoder, own, X86_MAX_LENGTH, insn);
    if (bytes)
        *bytes = own ? own : pc;
    return rc;
}

/* Records the accesses of one execution of insn to traced memory and adds
 * the pages they touch to s. */
static void record_accesses(const ucontext_t *uc, const x86_access_insn *insn,
                            uintptr_t fault, traced_open_set *s)
{
    uint64_t pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
    int recorded = 0;
    for (unsigned i = 0; i < x86_access_operands(insn); i++) {
        x86_access op;
        if (!x86_access_operand(insn, uc, i, fault, &op))
            continue;
        uint64_t size = op.size ? op.size : 1;
        if (!traced_has(op.addr, size))
            continue;
        traced_pages_add(s, op.addr, size);
        if (op.read)
            tracer_record(MEMTAP_EV_LOAD, 0, pc, op.addr, size, 0, 0);
        if (op.write)
            tracer_record(MEMTAP_EV_STORE, 0, pc, op.addr, size, 0, 0);
        recorded = 1;
    }
    if (!recorded) {
        /* an access the decoder does not describe: name the fault itself */
        traced_pages_add(s, fault, 1);
    }
}

/* Whether insn reaches the page of `fault` through the stack pointer (a
 * push, call or ret, or an rsp-based operand): the thread runs on a stack
 * in traced memory, a goroutine's or a coroutine's on a heap block. */
static int through_stack_pointer(const ucontext_t *uc,
                                 const x86_access_insn *insn, uintptr_t fault)
{
    for (unsigned i = 0; i < x86_access_operands(insn); i++) {
        x86_access op;
        if (x86_access_operand(insn, uc, i, fault, &op) && op.through_rsp &&
            page_start(op.addr) == page_start(fault))
            return 1;
    }
    return 0;
}

/* jmp *m / call *m through a traced pointer: the branch taken here. */
static int complete_branch(ucontext_t *uc, const x86_access_insn *insn,
                           uintptr_t fault)
{
    x86_access op;
    uint64_t target;
    greg_t *g = uc->uc_mcontext.gregs;
    uint64_t sp = (uint64_t)g[REG_RSP] - 8;
    uint64_t back = (uint64_t)g[REG_RIP] + x86_access_length(insn);
    int call = x86_access_is_call(insn);
    if (!x86_access_operand(insn, uc, 0, fault, &op) ||
        !traced_allows(op.addr, 8, 0) || !complete_indirect(insn, op.addr, &target) ||
        (call && (traced_has(sp, 8) || complete_push(sp, back) != 0)))
        return 0;
    traced_open_set unused = { .n = 0 };
    record_accesses(uc, insn, fault, &unused);
    if (call)
        g[REG_RSP] = (greg_t)sp;
    g[REG_RIP] = (greg_t)target;
    complete_counted();
    return 1;
}

/* A completed access recorded (complete_run's `done`). */
typedef struct completed {
    const ucontext_t *uc;
    const x86_access_insn *insn;
    uint64_t addr;
} completed;

static void record_completed(void *arg)
{
    const completed *c = arg;
    traced_open_set unused = { .n = 0 };
    record_accesses(c->uc, c->insn, c->addr, &unused);
}

int fault_complete_access(ucontext_t *uc, const x86_access_insn *insn, int mem,
                          const uint8_t *bytes, int record)
{
    x86_access op;
    complete_regs after;
    if (!x86_access_operand(insn, uc, (unsigned)mem, 0, &op))
        return 0;
    if (record == FAULT_RECORD_TRACED)
        record = traced_active() && traced_has(op.addr, op.size);
    if (record && !traced_allows(op.addr, op.size, op.write))
        return 0;
    completed c = { uc, insn, op.addr };
    int open = traced_completion_begin(op.addr, op.size);
    /* recorded while the access's lines are held: two threads' accesses
     * to a line get sequence numbers in the order they were made */
    int done = open >= 0 && complete_run(uc, insn, mem, &op, open, bytes, &after,
                                         record ? record_completed : NULL, &c);
    traced_completion_end();
    if (!done)
        return 0;
    if (open == 0 && !alias_at(op.addr)) /* closed, no alias: hot, it gets one */
        traced_alias_hot(op.addr);
    complete_commit(uc, insn, &after);
    return record ? 1 : 2;
}

/* The one-signal path: insn (decoded from `bytes`) completed here, its
 * page left closed. */
static int try_complete(ucontext_t *uc, const x86_access_insn *insn,
                        const uint8_t *bytes, uintptr_t fault)
{
    int mem = complete_operand(insn);
    if (mem < 0)
        return complete_branch(uc, insn, fault);
    uint64_t pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
    if (!fault_complete_access(uc, insn, mem, bytes, FAULT_RECORD))
        return 0;
    complete_counted();
    hot_completed(pc, x86_access_length(insn));
    return 1;
}


extern int __sigaction(int, const struct sigaction *, struct sigaction *);

/* How far around its stack pointer memtap's code may be running: the hot
 * sites' frame and xsave area above it, the calls it makes below. */
#define OWN_STACK_REACH (16 * 1024)

/* Closes the pages memtap's own code opened, except those of the stack it
 * runs on: a hot site's memtap code runs on the program's stack, which a
 * Go program keeps in traced memory (a goroutine's), and closing that page
 * under it would fault on its next push.  Those stay open, and are closed
 * by a later release that runs elsewhere (a handler on memtap's signal
 * stack). */
void fault_internal_release(void)
{
    if (tls_own.n == 0)
        return;
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
    /* only a stack in traced memory (memtap's own stacks are not) */
    int traced_stack = (pagemap_get(sp) & PM_TRACKED) != 0;
    sigset_t old;
    int guard = traced_lock_guarded(&old);
    int kept = 0;
    for (int i = 0; i < tls_own.n; i++) {
        uintptr_t page = tls_own.pages[i];
        if (traced_stack && page + OWN_STACK_REACH > sp &&
            page < sp + OWN_STACK_REACH)
            tls_own.pages[kept++] = page;
        else
            traced_page_close_locked(page);
    }
    tls_own.n = kept;
    traced_unlock_guarded(guard, &old);
}

void fault_handler_enter(void) { tls_depth++; }

void fault_handler_leave(void)
{
    if (--tls_depth == 0 && !tracer_internal() && !tls_own_mode)
        fault_internal_release();
}

/* Closes this thread's instruction window: its pages, its stop of the
 * other threads, its trap flag and mask in uc (after its instruction, or
 * when a program handler may never let it finish). */
static void window_close(ucontext_t *uc)
{
    window *w = &tls_win;
    if (!w->active)
        return;
    traced_lock();
    for (int i = 0; i < w->open.n; i++)
        traced_page_close_locked(w->open.pages[i]);
    traced_unlock();
    w->open.n = 0;
    w->active = 0;
    world_resume();
    uc->uc_mcontext.gregs[REG_EFL] &= ~(greg_t)TF_FLAG;
    uc->uc_sigmask = w->saved_mask;
}

typedef struct fault_bracket {
    int depth;
    int masked;
    int own_mode;
    int exclusive;
    int world;          /* this thread's stop of the others, released */
} fault_bracket;
_Static_assert(sizeof(fault_bracket) <= SIGTABLE_BRACKET_STATE,
               "the bracket's state fits the room sigtable gives it");

static void bracket_suspend(void *state, ucontext_t *uc)
{
    fault_bracket *b = state;
    b->depth = tls_depth;
    b->masked = traced_masked();
    b->own_mode = tls_own_mode;
    b->exclusive = tls_exclusive;
    window_close(uc);
    if (tls_exclusive) /* the program's own mask, not the guard's */
        uc->uc_sigmask = tls_exclusive_mask;
    b->world = world_release();
    traced_set_masked(0);
    tls_depth = 0;
    tls_own_mode = 0;
    tls_exclusive = 0;
    if (!tracer_internal())
        fault_internal_release();
}

static void bracket_resume(const void *state)
{
    const fault_bracket *b = state;
    tls_depth = b->depth;
    traced_set_masked(b->masked);
    tls_own_mode = b->own_mode;
    tls_exclusive = b->exclusive;
    world_reacquire(b->world);
}

const sigtable_bracket fault_handler_bracket = { bracket_suspend, bracket_resume };

int fault_nested_in_memtap(void)
{
    return tls_depth > 1 || tracer_internal() ||
           (tls_own_mode && tls_own_mode != tls_program_call);
}

int fault_in_handler(void) { return tls_depth > 0; }

int fault_in_memtap(void)
{
    return tls_depth > 0 || tracer_internal() || tls_own_mode;
}

void fault_own_begin(void) { tls_own_mode++; }

int fault_exclusive_begin(void)
{
    traced_guard_signals(&tls_exclusive_mask);
    tls_exclusive++;
    int exact = world_stop();
    if (!exact)
        fault_note_exposed(FAULT_EXPOSED_STOP);
    fault_own_begin();
    return exact;
}

void fault_exclusive_end(void)
{
    tls_exclusive--;
    fault_own_end();
    world_resume();
    traced_unguard_signals(&tls_exclusive_mask);
}
int fault_program_call_begin(void)
{
    int was = tls_program_call;
    fault_own_begin();
    tls_program_call = tls_own_mode;
    return was;
}

void fault_program_call_end(int was)
{
    tls_program_call = was;
    fault_own_end();
}

int fault_own_mode(void) { return tls_own_mode; }
void fault_own_reset(void) { tls_own_mode = 0; }

void fault_own_end(void)
{
    if (tls_own_mode > 0 && --tls_own_mode == 0 && tls_depth == 0 &&
        !tracer_internal())
        fault_internal_release();
}

/* A fault in memtap's own code, or in a block operation memtap records as
 * one event: opened silently until that code is done. */
static int own_fault(uintptr_t addr)
{
    if (tls_depth <= 1 && !tracer_internal() && !tls_own_mode)
        return 0;
    if (tls_own.overflow ||
        tls_own.n == (int)(sizeof tls_own.pages / sizeof *tls_own.pages)) {
        /* full (a block operation over hundreds of pages): the pages it
         * opened so far close, to open again if it comes back to them
         * (kept full, the fault would repeat for ever) */
        tls_own.overflow = 0;
        fault_internal_release();
    }
    int from = tls_own.n;
    traced_pages_add(&tls_own, addr, 1);
    sigset_t old;
    int guard = traced_lock_guarded(&old);
    traced_pages_open_locked(&tls_own, from);
    traced_unlock_guarded(guard, &old);
    return 1;
}

void fault_run_handler(fault_handler_body body, int masked, int sig,
                       siginfo_t *si, void *uc)
{
    own_flags();
    traced_set_masked(traced_masked() + masked);
    fault_handler_enter(); /* first: errno may live behind a traced page */
    int saved = errno;
    body(sig, si, uc);
    fault_handler_leave();
    errno = saved;
    traced_set_masked(traced_masked() - masked);
}

/* Whether the page's own rights (the program's) allow this access: if not,
 * the fault is the program's, not memtap's. */
static int allowed(uint8_t state, const ucontext_t *uc)
{
    int write = (uc->uc_mcontext.gregs[REG_ERR] & 2) != 0;
    return (state & PROT_READ) && (!write || (state & PROT_WRITE));
}

/* A fault while memtap runs an instruction for the program (complete_run
 * holds a lock the program's handler could need): said, and the process
 * ended with its trace, rather than handed to the program. */
static void memtaps_own_fault(const siginfo_t *si, const ucontext_t *uc)
{
    char b[160];
    fmt_buf m = { b, 0, sizeof b };
    fmt_str(&m, "memtap: internal fault at 0x");
    fmt_hex(&m, (uint64_t)uc->uc_mcontext.gregs[REG_RIP]);
    fmt_str(&m, " (address 0x");
    fmt_hex(&m, (uint64_t)(uintptr_t)si->si_addr);
    fmt_str(&m, ") completing an access: this is memtap's fault; rerun "
                "with --engine static\n");
    raw_say(b, m.len);
    process_die_by_signal(SIGSEGV, si, uc);
}

/* A fault on a page no longer traced may have raced with the page's
 * untracking by another thread (its protection was memtap's when the
 * access faulted): the instruction runs once more, and only the same
 * fault again is the program's. */
static __thread uintptr_t tls_retried_addr, tls_retried_pc;
static int retry_once(uintptr_t addr, const ucontext_t *uc)
{
    uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
    if (tls_retried_addr == addr && tls_retried_pc == pc) {
        tls_retried_addr = tls_retried_pc = 0;
        return 0;
    }
    tls_retried_addr = addr;
    tls_retried_pc = pc;
    return 1;
}

/* Whether the fault at addr is the fetch of an instruction: the kernel's
 * error code says so where the processor does, or addr lies within the
 * longest instruction from pc (an instruction that runs into the next
 * page). */
static int fetches(uintptr_t addr, const ucontext_t *uc)
{
    uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
    return (uc->uc_mcontext.gregs[REG_ERR] & PF_INSTR) ||
           addr - pc < X86_MAX_LENGTH;
}

static void on_segv_body(int sig, siginfo_t *si, ucontext_t *uc)
{
    uintptr_t addr = (uintptr_t)si->si_addr;
    uint8_t state = pagemap_get(addr);
    if (si->si_code == SEGV_ACCERR && !(state & PM_TRACKED) &&
        retry_once(addr, uc))
        return; /* another thread untracked the page after this fault */
    if (si->si_code != SEGV_ACCERR || !(state & PM_TRACKED) ||
        !allowed(state, uc)) {
        if (complete_running())
            memtaps_own_fault(si, uc); /* dies as its instruction re-runs */
        else
            sigtable_chain(sig, si, uc);
        return;
    }
    if (own_fault(addr))
        return;
    if (fetches(addr, uc)) {
        /* the program runs code from traced memory (a JIT compiler's):
         * the page stops being traced, or each of its instructions would
         * fault and be stepped */
        traced_stop(page_start(addr), page_start(addr) + PAGE);
        atomic_fetch_add(&fault_state.code_pages, 1);
        return;
    }
    window *w = &tls_win;
    if (w->active) {
        /* the same instruction needs one more page */
        int from = w->open.n;
        traced_pages_add(&w->open, addr, 1);
        traced_lock();
        traced_pages_open_locked(&w->open, from);
        traced_unlock();
        return;
    }
    atomic_fetch_add(&fault_state.faults, 1);
    tls_traps++;
    x86_access_insn insn;
    const uint8_t *bytes;
    int decoded = decode(uc, &insn, &bytes) == 0;
    if (decoded && through_stack_pointer(uc, &insn, addr)) {
        /* the fault engine traces no stack: the page is one, and stops
         * being traced (or every push would fault) */
        traced_stop(page_start(addr), page_start(addr) + PAGE);
        atomic_fetch_add(&fault_state.stack_pages, 1);
        return;
    }
    if (decoded && try_complete(uc, &insn, bytes, addr))
        return;
    w->open.n = 0;
    w->open.overflow = 0;
    /* one stop of the other threads serves the whole window */
    w->stopped = world_stop();
    if (!w->stopped)
        fault_note_exposed(FAULT_EXPOSED_STOP);
    if (decoded) {
        if (fault_emulate_rep_string(uc, &insn)) {
            world_resume();
            return;
        }
        record_accesses(uc, &insn, addr, &w->open);
        w->rep = x86_access_repeats(&insn);
    } else {
        traced_pages_add(&w->open, addr, 1);
        w->rep = 0;
    }
    if (w->open.n == 0)
        traced_pages_add(&w->open, addr, 1);
    traced_lock();
    traced_pages_open_locked(&w->open, 0);
    traced_unlock();
    w->active = 1;
    w->pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
    w->saved_mask = uc->uc_sigmask;
    sigbits_async(&uc->uc_sigmask);
    uc->uc_mcontext.gregs[REG_EFL] |= (greg_t)TF_FLAG;
}

static void on_trap_body(int sig, siginfo_t *si, ucontext_t *uc)
{
    window *w = &tls_win;
    if (si->si_code == SI_KERNEL &&
        ((fault_state.trap_claim && fault_state.trap_claim(uc)) || hot_trap(uc)))
        return; /* an int3 site of a rewritten module, or a site being
                 * patched */
    /* a step's trap, which some virtual machines report now and then
     * without the single-step bit in DR6 (the kernel then says TRAP_BRKPT,
     * as for an icebp) */
    int step = si->si_code == TRAP_TRACE ||
               (si->si_code == TRAP_BRKPT &&
                ((uint64_t)uc->uc_mcontext.gregs[REG_EFL] & TF_FLAG));
    if (!w->active || !step) {
        if (config()->debug_traps) {
            char b[96];
            fmt_buf m = { b, 0, sizeof b };
            fmt_str(&m, "memtap: SIGTRAP at ");
            fmt_u64(&m, (uint64_t)uc->uc_mcontext.gregs[REG_RIP]);
            fmt_str(&m, " code ");
            fmt_u64(&m, (uint64_t)(uint32_t)si->si_code);
            fmt_str(&m, " window ");
            fmt_u64(&m, (uint64_t)w->active);
            fmt_str(&m, " flags ");
            fmt_u64(&m, (uint64_t)uc->uc_mcontext.gregs[REG_EFL]);
            fmt_char(&m, '\n');
            raw_say(b, m.len);
        }
        sigtable_chain(sig, si, uc);
        return;
    }
    uint64_t pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
    if (w->rep && pc == w->pc && uc->uc_mcontext.gregs[REG_RCX] != 0) {
        /* one more iteration of a rep-prefixed instruction */
        x86_access_insn insn;
        if (decode(uc, &insn, NULL) == 0) {
            int from = w->open.n;
            record_accesses(uc, &insn, 0, &w->open);
            traced_lock();
            traced_pages_open_locked(&w->open, from);
            traced_unlock();
        }
        return;
    }
    window_close(uc);
}

static void on_segv(int sig, siginfo_t *si, void *uc)
{
    fault_run_handler(on_segv_body, 1, sig, si, uc);
}

static void on_trap(int sig, siginfo_t *si, void *uc)
{
    fault_run_handler(on_trap_body, 1, sig, si, uc);
}

static int install(int sig, void (*fn)(int, siginfo_t *, void *))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = fn;
    /* both nest: memtap's own code may touch a protected page, or meet
     * the int3 of a hot site being patched (a blocked SIGTRAP would kill) */
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigbits_async(&sa.sa_mask);
    /* while our handler runs, the program's asynchronous signals wait */
    return __sigaction(sig, &sa, NULL);
}

int fault_init(void)
{
    if (pagemap_init() != 0 || x86_decoder_init(&fault_state.decoder) != 0)
        return -1;
    if (install(SIGSEGV, on_segv) != 0 || install(SIGTRAP, on_trap) != 0)
        return -1;
    if (complete_init() == 0) { /* without it, every access is stepped */
        hot_init();
        alias_init(config()->fault_path == FAULT_PATH_HOT, complete_mem_read,
                   complete_mem_write);
    }
    traced_protect_pages();
    own_signals_claim(SIGSEGV);
    own_signals_claim(SIGTRAP);
    fault_state.enabled = 1;
    return 0;
}
