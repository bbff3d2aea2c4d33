/*
 * hidden_task.h - a process of memtap's own inside the traced program's
 * memory (the recorder's writer), made with a bare clone(2): no pthread of
 * the program's libc, nothing allocated in its heap, every signal blocked
 * (the program's signals go to its own threads), never parked or traced.
 * It shares the program's memory and descriptors but not its thread
 * group: the program sees it neither in /proc/self/task nor in its waits.
 * It runs only memtap's code on memory memtap mapped: it may call libc
 * functions that touch no thread state (memcpy), and the compressor.  It
 * must end itself (no exit of the program's takes it along) and be
 * reaped.
 */
#ifndef MEMTAP_PRELOAD_HIDDEN_TASK_H
#define MEMTAP_PRELOAD_HIDDEN_TASK_H

#include <stddef.h>

/* Learns how much thread-local storage the loaded modules use (from
 * normal code at start-up: it asks the loader).  0, or -1 when unknown:
 * then no hidden process can be started. */
int hidden_task_prepare(void);

typedef struct hidden_process {
    long pid;                   /* 0: none */
    void *base;                 /* its stack, TLS and TCB */
    size_t size;
} hidden_process;

/* Starts fn(arg) in a hidden process, which ends when fn returns.  Safe
 * in a signal handler.  Returns its pid, or a negative errno. */
long hidden_process_start(void (*fn)(void *), void *arg, hidden_process *p);

/* Waits for p to end, reaps it and unmaps its stack; 0, or a negative
 * errno (-ECHILD: none, or another wait reaped it). */
int hidden_process_reap(hidden_process *p);

/* Unmaps p's stack without waiting: a forked child's copy of its parent's
 * hidden process, which is not the child's. */
void hidden_process_forget(hidden_process *p);

/* Whether the calling code runs in a hidden process. */
int hidden_task_current(void);

/* The number of CPUs the process may run on (1 when unknown). */
int hidden_task_cpus(void);

#endif
