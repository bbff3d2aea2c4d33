/*
 * complete.h - the fault engine's one-signal path: a faulting access is
 * completed inside the SIGSEGV handler while its page stays protected.
 * The operand's bytes are read through /proc/self/mem (which reaches pages
 * the program cannot), the instruction runs out of line on that copy with
 * the program's registers, flags and vector state, and a written copy goes
 * back the same way.  No mprotect, no trap flag, no page opened for the
 * other threads (so nothing to stop them for).
 */
#ifndef MEMTAP_PRELOAD_COMPLETE_H
#define MEMTAP_PRELOAD_COMPLETE_H

#include <stddef.h>
#include <stdint.h>
#include <ucontext.h>

struct x86_access_insn;  /* x86/access.h */
struct x86_access;

/* Sets the path up (MEMTAP_FAULT_PATH=step turns it off; the descriptor
 * of the process's memory, complete_fd's, opens either way).  0, or -1
 * when it cannot run here: every access then takes the trap-flag path. */
int complete_init(void);

/* The memory operand of insn that completion would read or write, or -1
 * when the instruction is not one it runs (more than one memory operand,
 * stack or control flow, rsp or segment registers, operands over 64
 * bytes, instructions that may raise an exception of their own). */
int complete_operand(const struct x86_access_insn *insn);

/* jmp *m and call *m through an 8-byte pointer at addr (the PLT's jumps
 * through a GOT the loader left writable): 1 with the pointer read into
 * *target, or 0 when insn is not one or it cannot be read. */
int complete_indirect(const struct x86_access_insn *insn, uint64_t addr,
                      uint64_t *target);
/* Stores a call's return address at sp on the program's stack, within
 * the page's rights: 0, or -1 (a guard page, say). */
int complete_push(uint64_t sp, uint64_t value);

/* The registers and flags an instruction leaves (complete_run's result;
 * the layout is complete_enter's). */
typedef struct complete_regs {
    uint64_t gpr[16];   /* rax rcx rdx rbx rsp rbp rsi rdi r8 .. r15 */
    uint64_t flags;
    uint32_t xmask;     /* the xsave components loaded and saved */
} complete_regs;

/* Runs insn (at uc's pc, its bytes `bytes`) with its memory operand `mem`
 * (op: its access at uc) on a copy, or on the memory itself when `direct`
 * (its pages are open, or it is not traced):
 * memory is updated, the vector registers in uc's frame too, and *after
 * holds the general registers and flags; then `done(arg)` (when not
 * NULL) runs while the access's cache lines are still held, so that what
 * it records of the access is ordered as the access is among those of
 * every other completion; 1.  0 leaves memory and uc untouched (the
 * caller steps the instruction). */
int complete_run(const ucontext_t *uc, const struct x86_access_insn *insn,
                 int mem, const struct x86_access *op, int direct,
                 const uint8_t *bytes, complete_regs *after,
                 void (*done)(void *arg), void *arg);
/* Gives uc the registers of *after and moves its pc past insn. */
void complete_commit(ucontext_t *uc, const struct x86_access_insn *insn,
                     const complete_regs *after);

/* In a forked child: the locks other threads of the parent held are free
 * (those threads are not here). */
void complete_after_fork(void);

/* Whether this thread is running an instruction for complete_run: a fault
 * then is memtap's (the copy it runs on is its own), never the program's. */
int complete_running(void);

/* Reads n bytes at addr whatever the page's rights: 0, or -1. */
int complete_peek(void *buf, size_t n, uint64_t addr);

/* Writes n bytes at addr whatever the page's rights: 0, or -1. */
int complete_poke(uint64_t addr, const void *buf, size_t n);

/* complete_peek and complete_poke through /proc/self/mem alone (the
 * aliases' own copies, alias.h). */
int complete_mem_read(void *buf, size_t n, uint64_t addr);
int complete_mem_write(uint64_t addr, const void *buf, size_t n);

/* memtap's descriptor of /proc/self/mem, or -1 (fdguard keeps it open). */
int complete_fd(void);

/* Counts one more access completed in the handler. */
void complete_counted(void);
/* Accesses completed in the handler, for the closing note. */
uint64_t complete_count(void);

#endif
