/*
 * hidden_thread.h - threads of memtap's own inside the traced process,
 * made with a bare clone(2): no pthread of the program's libc, nothing
 * allocated in its heap, every signal blocked (the program's signals go
 * to its own threads), never parked or traced.  Such a thread runs only
 * memtap's code on memory memtap mapped: it may call libc functions that
 * touch no thread state (memcpy), and the compressor.
 */
#ifndef MEMTAP_PRELOAD_HIDDEN_THREAD_H
#define MEMTAP_PRELOAD_HIDDEN_THREAD_H

/* Learns how much thread-local storage the loaded modules use (from
 * normal code at start-up: it asks the loader).  0, or -1 when unknown:
 * then no hidden thread can be started. */
int hidden_thread_prepare(void);

/* Starts fn(arg) on a hidden thread; fn must never return.  Safe in a
 * signal handler.  Returns its tid, or a negative errno. */
long hidden_thread_start(void (*fn)(void *), void *arg);

/* Whether the calling thread is a hidden thread. */
int hidden_thread_current(void);

/* The number of CPUs the process may run on (1 when unknown). */
int hidden_thread_cpus(void);

#endif
