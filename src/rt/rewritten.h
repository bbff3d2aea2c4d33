/*
 * rewritten.h - the runtime of files rewritten by `memtap instrument`,
 * hosted by libmemtap.so (see rewritten.c); abi.h is what it and the
 * rewriter agree on.
 */
#ifndef MEMTAP_RT_REWRITTEN_H
#define MEMTAP_RT_REWRITTEN_H

#include <ucontext.h>

#include "preload/record/tracer.h"
#include "sys/only.h"

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

/* Around a program's signal handler, which runs over uc: a log sequence
 * it interrupted before its commit goes back to its start (mt_log_shape),
 * so that neither overwrites the other's entries; and memtap's own work it
 * interrupted (whose logs are dropped) is suspended, since the handler's
 * accesses are the program's.  A handler that leaves by longjmp leaves
 * the thread out of memtap's work.  The inner bracket of sigtable.h,
 * whichever engine runs. */
extern const struct sigtable_bracket rewritten_handler_bracket;
/* Whether the code at uc is on its way into a flush (a log sequence's
 * no-room path, the flush stub before its call, the flush's entry): a
 * program handler must wait for the flush's end (defer_until_section). */
int rewritten_flush_coming(const ucontext_t *uc);
struct fmt_buf;
/* Appends the modules hooked and the int3 sites hit to the closing note. */
void rewritten_end_stats(struct fmt_buf *b);
/* How many rewritten modules are hooked. */
int rewritten_modules(void);

/* Sets what is kept (ONLY_* of sys/only.h, MEMTAP_ONLY: heap blocks and
 * mappings, the modules' data and bss, both judged by the traced set, and
 * everything else, stacks first of all), and whether the window is open
 * from the start. */
void rewritten_start(unsigned keep, int open);
/* Opens or closes the window (memtap_start/stop, main with --from-main);
 * the calling thread's entries logged before are handed over first. */
void rewritten_set_active(int on);
/* Whether the calling thread's program accesses are being recorded (for
 * block operations, which are recorded as single events). */
int rewritten_recording(void);
/* Around memtap's own work on the program's behalf (allocator calls,
 * block operations): what rewritten code logs meanwhile is dropped.
 * Nests. */
void rewritten_own_begin(void);
void rewritten_own_end(void);
/* uninit --check-once: the load at pc needs checking no more; rewritten
 * code stops logging it (its check-once slot turned into a jump around
 * its log sequence). */
void rewritten_check_passed(uint64_t pc);
/* The rewrite header of a loaded module, or NULL when it has none. */
struct dl_phdr_info;
struct mt_rewrite_header;
const struct mt_rewrite_header *rewritten_header(const struct dl_phdr_info *info);

#endif
