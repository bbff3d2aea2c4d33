/*
 * own_stack.h - every thread memtap sees start gets an alternate signal
 * stack of its own (memory of memtap's, never the traced heap), so that a
 * stack overflow on any thread still reaches memtap's handlers and the
 * trace is flushed; memtap's code that needs room (the flush of rewritten
 * code's entries, a hot site's access) runs on it too, since a program's
 * stack can be small and in traced memory (a goroutine's).
 */
#ifndef MEMTAP_PRELOAD_OWN_STACK_H
#define MEMTAP_PRELOAD_OWN_STACK_H

#include <stdint.h>

/* Gives the calling thread its stack (once; never again after removal). */
void own_stack_install(void);

/* Takes it away at the thread's end (not while a handler runs on it). */
void own_stack_remove(void);

/* Where memtap's code called on stack pointer sp runs: the top of the
 * thread's stack, made now if the thread has none yet, or sp (16-byte
 * aligned) when it is already there or none can be made. */
uintptr_t own_stack_for(uintptr_t sp);

#endif
