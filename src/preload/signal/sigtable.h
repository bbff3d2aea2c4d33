/*
 * sigtable.h - the program's own dispositions of the signals memtap
 * stands between (the ones its engines took, and under the fault engine
 * the asynchronous ones whose handlers it calls itself): what sigaction()
 * reports to the program, and the delivery of a signal to the program's
 * handler, or its default action, when memtap does not consume it.  The
 * interposed sigaction()/signal() (signals.c) write the table; the
 * engines' handlers deliver through it.
 */
#ifndef MEMTAP_PRELOAD_SIGTABLE_H
#define MEMTAP_PRELOAD_SIGTABLE_H

#include <signal.h>
#include <stdint.h>
#include <ucontext.h>

/* The program's action for sig (1.._NSIG-1), to read or set. */
struct sigaction *sigtable_action(int sig);

/* Whether a runs code of the program's own (a handler, not SIG_DFL or
 * SIG_IGN). */
int sigtable_runs_handler(const struct sigaction *a);

/* Notes whether the program's action for sig runs a handler. */
void sigtable_note(int sig, int handler);

/* The signals whose program action runs a handler (bit sig - 1), as far
 * as the program's sigaction calls and the engines' starts have told. */
uint64_t sigtable_handlers(void);

/* memtap takes sig over now: the disposition the program had set becomes
 * the one sigaction() reports and sigtable_chain() delivers to. */
void sigtable_adopt(int sig, const struct sigaction *had);

/* Delivers a signal memtap does not consume to the program's handler, or
 * ends the process as the default action would (after flushing). */
void sigtable_chain(int sig, siginfo_t *si, void *uc);

/* What an engine does around a program handler called from its own
 * handler: suspend takes the thread out of memtap's work (saving what
 * resume puts back in state, at most SIGTABLE_BRACKET_STATE bytes; uc is
 * the interrupted context, whose mask it may give back to the program),
 * so that a handler leaving by longjmp or exit leaves the thread as the
 * program expects. */
#define SIGTABLE_BRACKET_STATE 64
typedef struct sigtable_bracket {
    void (*suspend)(void *state, ucontext_t *uc);
    void (*resume)(const void *state);
} sigtable_bracket;
/* Sets the bracket of layer `outer` (1: suspended first and resumed last,
 * the fault engine's; 0: the static engine's); at start. */
void sigtable_set_bracket(int outer, const sigtable_bracket *b);

#endif
