/*
 * live_code.h - changing code while other threads run it, and pages for
 * the trampolines of patched instructions within a jump's reach (the
 * fault engine's hot sites, hot.c).
 */
#ifndef MEMTAP_PRELOAD_LIVE_CODE_H
#define MEMTAP_PRELOAD_LIVE_CODE_H

#include <stddef.h>
#include <stdint.h>

/* Registers for the serializing barrier and notes where the main stack
 * may grow (call it on the main thread).  0, or -1. */
int live_code_init(void);

/* Writes len bytes at pc as the kernel changes live code: an int3 first,
 * then the rest, then the first byte, each step serialized on every CPU
 * running the process (membarrier's SYNC_CORE), through /proc/self/mem,
 * so that the page never becomes writable; len is at most 16.  0, or -1
 * (the bytes are put back as they were). */
int live_code_write(uint64_t pc, const uint8_t *bytes, size_t len);

/* Room for a trampoline of `bytes` bytes that a jmp rel32 written over
 * the first len bytes at pc reaches, the rest of its displacement being
 * `tail` (the 4 bytes after the instruction, left as they are).  0 with
 * *at, or -1. */
int live_code_slot(uint64_t pc, size_t len, const uint8_t *tail, size_t bytes,
                   uint64_t *at);

#endif
