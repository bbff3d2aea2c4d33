/*
 * rewritten.h - the runtime of files rewritten by `memtap instrument`,
 * hosted by libmemtap.so (see rewritten.c); abi.h is what it and the
 * rewriter agree on.
 */
#ifndef MEMTAP_RT_REWRITTEN_H
#define MEMTAP_RT_REWRITTEN_H

#include <ucontext.h>

#include "preload/tracer.h"

/* What the recorder calls: hand over a thread's logged entries before its
 * other events, at its end, in a forked child (the buffered entries are
 * the parent's) and at the end of the run (the last entries, the block
 * counts of --profile files, the consumer's end). */
extern const tracer_client rewritten_client;

/* Hooks the rewritten modules loaded now (start-up, after dlopen). */
void rewritten_scan(void);
/* A SIGTRAP at uc: 1 when it was an int3 site, now sent to its
 * trampoline. */
int rewritten_trap(ucontext_t *uc);
/* Whether SIGTRAP's handler is the runtime's (int3 sites, no fault engine). */
int rewritten_owns_signal(int sig);
struct fmt_buf;
/* Appends the modules hooked and the int3 sites hit to the closing note. */
void rewritten_end_stats(struct fmt_buf *b);
/* How many rewritten modules are hooked. */
int rewritten_modules(void);

#endif
