/*
 * rewritten.h - the runtime of files rewritten by `memtap instrument`,
 * hosted by libmemtap.so (see rewritten.c).
 */
#ifndef MEMTAP_PRELOAD_REWRITTEN_H
#define MEMTAP_PRELOAD_REWRITTEN_H

/* Hooks the rewritten modules loaded now (start-up, after dlopen). */
void rewritten_scan(void);
/* Turns the calling thread's logged entries into records (before any
 * other event of the thread, and at the end). */
void rewritten_sync(void);
/* The calling thread ends: its entries are written, later ones dropped. */
void rewritten_thread_exit(void);
/* In a forked child: the buffered entries are the parent's. */
void rewritten_after_fork_child(void);
/* The end of the run (exit, exec): the last entries, the block counts of
 * --profile files, the consumer's end. */
void rewritten_finish(void);
/* A SIGTRAP at uc: 1 when it was an int3 site, now sent to its
 * trampoline. */
#include <ucontext.h>
int rewritten_trap(ucontext_t *uc);
/* Whether SIGTRAP's handler is the runtime's (int3 sites, no fault engine). */
int rewritten_owns_signal(int sig);
struct fmt_buf;
/* Appends the modules hooked and the int3 sites hit to the closing note. */
void rewritten_end_stats(struct fmt_buf *b);
/* How many rewritten modules are hooked. */
int rewritten_modules(void);

#endif
