/*
 * alloc_stacks.h - the call stacks of a trace's heap events as the
 * reports use them: the site a block is named after (the first frame
 * outside allocator wrappers: a default list, plus --alloc-wrapper), one
 * key per distinct stack (the trace may hold a stack under two ids), and
 * the stack's frames.  Answers are cached per stack id.
 */
#ifndef MEMTAP_SYMBOLS_ALLOC_STACKS_H
#define MEMTAP_SYMBOLS_ALLOC_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include "memtap/trace.h"

struct symbolizer;
typedef struct alloc_stacks alloc_stacks;

/* Reads the stacks of t (which must outlive it), names frames with sym. */
alloc_stacks *alloc_stacks_create(const memtap_trace *t,
                                  struct symbolizer *sym);
void alloc_stacks_destroy(alloc_stacks *a);

/* Adds a pattern (fnmatch(3): "xmalloc", "my_alloc_*") to the functions
 * every alloc_stacks created after takes for allocator wrappers; 0, or -1
 * when out of memory.  For the command line's --alloc-wrapper. */
int alloc_stacks_add_wrapper(const char *pattern);

/* Whether a function of that name is an allocator wrapper. */
int alloc_stacks_is_wrapper(const char *function);

/* The site heap event r is named after: the first frame of its stack
 * whose function is no wrapper (the outermost frame when all are), else
 * its call site r->pc. */
uint64_t alloc_stacks_site(alloc_stacks *a, const memtap_record *r);

/* One key per distinct stack: the first id with the same frames as id;
 * 0 for 0 and for ids the trace has no stack for. */
uint32_t alloc_stacks_key(alloc_stacks *a, uint32_t id);

#endif
