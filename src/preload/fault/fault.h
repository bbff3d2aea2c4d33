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


#include "preload/memmap/traced_set.h"

/* Sets up the page map, the decoder and the SIGSEGV/SIGTRAP handlers.
 * Returns 0, or -1 when the engine cannot run (it stays off). */
int fault_init(void);
int fault_enabled(void);
/* Who else places int3 in code (the static engine's sites in a rewritten
 * module loaded under this engine): claim(uc) is asked first about an
 * int3's SIGTRAP and returns 1 when it was one of its own, now dealt
 * with.  Set at start. */
void fault_set_trap_claim(int (*claim)(ucontext_t *uc));

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
/* Like fault_own_begin/end around a call of the program's that memtap
 * makes for it (an interposed read or write): its system call is the
 * program's, not memtap's own (fault_nested_in_memtap), so the program's
 * signals interrupt it as natively.  begin returns what end gives back. */
int fault_program_call_begin(void);
void fault_program_call_end(int was);
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
 * abandoned window is opened again when the instruction re-executes).
 * The outer bracket of sigtable.h, whichever engine runs. */
extern const struct sigtable_bracket fault_handler_bracket;

/* Runs a handler's body in that bracket with errno preserved; `masked`
 * says the handler's mask already holds off asynchronous signals. */
typedef void (*fault_handler_body)(int sig, siginfo_t *si, ucontext_t *uc);
void fault_run_handler(fault_handler_body body, int masked, int sig,
                       siginfo_t *si, void *uc);

/* Faults and emulated system calls the calling thread has taken (the
 * second counts one of the latter). */
uint64_t fault_thread_traps(void);
void fault_thread_trapped(void);

/* Counters for the closing note. */
uint64_t fault_count(void);
/* Pages of traced memory found to be a thread's stack (an access through
 * the stack pointer faulted there) and no longer traced. */
uint64_t fault_stack_pages(void);
/* Pages of traced memory the program ran code from (a JIT compiler's
 * code cache), no longer traced. */
uint64_t fault_code_pages(void);
uint64_t fault_exposed_windows(void);

#endif
