/*
 * stacks.h - the call stacks of heap events (stacks.c): unwound from the
 * heap wrappers, each distinct one written once to the trace's STACKS
 * table.
 */
#ifndef MEMTAP_PRELOAD_STACKS_H
#define MEMTAP_PRELOAD_STACKS_H

#include <stdint.h>

/* The stack of the calling thread from the frame that returns to site
 * (a heap wrapper's call site) outwards, at most MEMTAP_STACK_DEPTH
 * frames (default 16): its id in the trace's table, written there first
 * if new; 0 when stacks are off or the frame was not found. */
uint32_t stacks_id(uint64_t site);

/* In a forked child, whose trace has none of the parent's rows. */
void stacks_after_fork_child(void);

#endif
