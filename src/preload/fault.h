/*
 * fault.h - the fault engine (MadT's profiler): the pages of the traced set
 * (data and bss of the program and its libraries, heap blocks, mappings)
 * lose their access rights; each access faults, is recorded, and completes
 * under the trap flag before the page is closed again.
 */
#ifndef MEMTAP_PRELOAD_FAULT_H
#define MEMTAP_PRELOAD_FAULT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <ucontext.h>

#include <Zydis/Zydis.h>

#include "pagemap.h"

/* Sets up the page map, the decoder and the SIGSEGV/SIGTRAP handlers.
 * Returns 0, or -1 when the engine cannot run (it stays off). */
int fault_init(void);
int fault_enabled(void);

/* Keeps the traced set without the engine (nothing is protected): the
 * static engine asks it which accesses MadT records.  0, or -1. */
int fault_init_tracking(void);
/* From now on the traced set's pages are protected (the engine is on). */
void fault_set_protecting(void);

/* Who hears of changes to the mappings under the traced set (a shadow
 * tool's shadow follows them): an unmapping, a move (mremap), a fixed
 * mapping about to be made over [addr, addr+len). */
typedef struct fault_map_listener {
    void (*unmapped)(uintptr_t start, uintptr_t end);
    void (*moved)(uintptr_t old, size_t old_len, uintptr_t new_addr,
                  size_t new_len);
    void (*before_fixed)(uintptr_t addr, size_t len);
} fault_map_listener;
/* Sets the listener (at start, before the program runs; one at most). */
void fault_set_map_listener(const fault_map_listener *l);
/* Whether the traced set is kept (the engine, or tracking alone). */
int fault_tracking(void);
/* The kind of traced memory addr lies in: PM_HEAP, PM_STATIC or 0. */
uint8_t fault_region(uintptr_t addr);

/* Adds [start, end) to the traced set with its own rights `prot`, as
 * memory of kind `region` (PM_HEAP or PM_STATIC). */
void fault_track(uintptr_t start, uintptr_t end, int prot, int region);
/* Removes [start, end) from the traced set (it was unmapped). */
void fault_untrack(uintptr_t start, uintptr_t end);
/* munmap(a[0], a[1]), or mmap(a[0], ..., a[5]) with MAP_FIXED (nr says
 * which; the shadow tools hear of the latter first), and, when it
 * succeeds, fault_untrack of [a[0], a[0] + a[1]), as
 * one step for the other threads: a mapping another thread makes at the
 * same address is tracked after it, never before (its new state would be
 * cleared, its pages left closed).  The system call's result. */
long fault_unmap(long nr, const long *a);
/* A mapping moved (mremap): its traced state follows it. */
void fault_move(uintptr_t old, size_t old_len, uintptr_t new_addr,
                size_t new_len);
/* The program changed the rights of [start, end) (the kernel applied
 * them): remember them, and keep traced pages closed. */
void fault_reprotect(uintptr_t start, uintptr_t end, int prot);

/* Starts or stops trapping accesses (memtap_start / memtap_stop). */
void fault_set_active(int on);
int fault_active(void);

/* Gives [addr, addr+len) back its rights for memtap's own work on the
 * program's behalf (block operations, system calls); fault_close undoes
 * it.  Nests; a page closes when its last opener closes it. */
typedef struct fault_open_set {
    uintptr_t pages[64];
    int n;
    int overflow;       /* more pages than fit: everything was opened */
} fault_open_set;
void fault_open(fault_open_set *s, uintptr_t addr, size_t len);
void fault_close(fault_open_set *s);

/* Stops tracing the pages of [start, end) for good, the program's own
 * rights given back (the mapping stays). */
void fault_stop_tracing(uintptr_t start, uintptr_t end);

/* Whether any page of [addr, addr+len) is traced. */
int fault_is_tracked(uintptr_t addr, size_t len);
/* Whether every page of [addr, addr+len) is traced and the program's own
 * rights let it be read (and written, if `write`). */
int fault_traced_allows(uintptr_t addr, size_t len, int write);

/* Closes the pages memtap's own code (a handler, the recorder) had to
 * open for itself; called when the calling thread leaves memtap's code. */
void fault_internal_release(void);

/* Whether the calling thread runs memtap's code (a handler, the recorder,
 * or a block operation being recorded as one event). */
int fault_in_memtap(void);
/* Whether this thread is inside one of the engine's signal handlers. */
int fault_in_handler(void);
/* Inside a memtap handler: whether the handler interrupted memtap's own
 * code (a system call memtap made through the C library). */
int fault_nested_in_memtap(void);
/* Brackets a block operation: protected pages it touches are opened
 * without being recorded, and closed at fault_own_end(). */
void fault_own_begin(void);
void fault_own_end(void);
/* Like fault_own_begin/end, with the other threads stopped meanwhile: for
 * block operations that never block (memcpy, memset, strcpy, ...). */
int fault_exclusive_begin(void);
void fault_exclusive_end(void);
/* A window that other threads could run into (counted for the note):
 * why is the system call that opened traced pages while they ran, or
 * FAULT_EXPOSED_STOP when they could not be stopped.  The first one's why
 * is kept for the note (fault_first_exposed). */
#define FAULT_EXPOSED_STOP (-1L)
void fault_note_exposed(long why);
/* The first window's why + 2 (0: none yet). */
int64_t fault_first_exposed(void);
int fault_own_mode(void);
/* Ends the thread's own mode whatever its depth (without page protection:
 * a fault during it may leave by longjmp). */
void fault_own_reset(void);

/* Brackets a memtap signal handler (faults inside are memtap's own). */
void fault_handler_enter(void);
void fault_handler_leave(void);

/* Around a call from a memtap handler into a program's handler (whose
 * signal arrived in uc): the thread is the program's while it runs, so a
 * handler that never returns (longjmp, siglongjmp, exit) leaves nothing of
 * memtap's behind: no handler depth, no open instruction window (its pages
 * are closed, its trap flag cleared, the program's mask put back in uc), no
 * block operation in progress, no other thread kept stopped, no signal
 * kept blocked.  A handler that returns finds it all as it was (an
 * abandoned window is opened again when the instruction re-executes). */
typedef struct fault_bracket {
    int depth;
    int masked;
    int own_mode;
    int exclusive;
    int world;          /* this thread's stop of the others, released */
} fault_bracket;
void fault_bracket_suspend(fault_bracket *b, ucontext_t *uc);
void fault_bracket_resume(const fault_bracket *b);

/* Runs a handler's body in that bracket with errno preserved; `masked`
 * says the handler's mask already holds off asynchronous signals. */
typedef void (*fault_handler_body)(int sig, siginfo_t *si, ucontext_t *uc);
void fault_run_handler(fault_handler_body body, int masked, int sig,
                       siginfo_t *si, void *uc);

/* Faults and emulated system calls the calling thread has taken (the
 * second counts one of the latter). */
uint64_t fault_thread_traps(void);
void fault_thread_trapped(void);

/* Completes one execution of insn (its bytes `bytes`, at uc's pc) while
 * the pages of its memory operand `mem` stay as they are: records it when
 * `record` (the operand is then traced), gives uc the registers it leaves
 * and moves the pc past it; 1.  0 when it cannot (uc untouched). */
int fault_complete_access(ucontext_t *uc, const ZydisDecodedInstruction *insn,
                          const ZydisDecodedOperand *ops, int mem,
                          const uint8_t *bytes, int record);
/* rep movs / rep stos at uc's pc, performed and recorded here (uc moved
 * past it); 0 for any other instruction (uc untouched). */
int fault_emulate_rep_string(ucontext_t *uc,
                             const ZydisDecodedInstruction *insn,
                             const ZydisDecodedOperand *ops);
/* Counters for the closing note. */
uint64_t fault_count(void);
/* Pages of traced memory found to be a thread's stack (an access through
 * the stack pointer faulted there) and no longer traced. */
uint64_t fault_stack_pages(void);
uint64_t fault_exposed_windows(void);

#endif
