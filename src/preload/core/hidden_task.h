/*
 * hidden_task.h - a process of memtap's own inside the traced program's
 * memory (the recorder's writer), made with a bare clone(2): no pthread of
 * the program's libc, nothing allocated in its heap, every signal blocked
 * (the program's signals go to its own threads), never parked or traced.
 * It shares the program's memory and descriptors but not its thread
 * group, and under memtap run it is not the program's child (an orphan
 * memtap run, the run's subreaper, reaps): the program sees it neither in
 * /proc/self/task nor in its waits, even with __WALL.  Otherwise it is
 * its child, whose end sends no signal: only __WALL waits see it.
 * It runs only memtap's code on memory memtap mapped: it may call libc
 * functions that touch no thread state (memcpy), and the compressor.  It
 * must end itself (no exit of the program's takes it along): it learns of
 * the program's end from a watch descriptor (hidden_task_watch).
 */
#ifndef MEMTAP_PRELOAD_HIDDEN_TASK_H
#define MEMTAP_PRELOAD_HIDDEN_TASK_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Learns how much thread-local storage the loaded modules use (from
 * normal code at start-up: it asks the loader).  0, or -1 when unknown:
 * then no hidden process can be started. */
int hidden_task_prepare(void);

typedef struct hidden_process {
    long pid;                   /* 0: none */
    void *base;                 /* its stacks, TLS and TCB */
    size_t size;
    _Atomic uint32_t running;   /* 1 until it ends: the kernel clears it */
    int child;                  /* the process's child, not an orphan */
} hidden_process;

/* Starts fn(arg) in a hidden process named `name` (ps; the process's
 * child, not an orphan, takes it when fn gives it), which ends when fn
 * returns: an orphan when `orphan` says a subreaper of memtap's will take
 * it in and the process is no subreaper itself, else the process's child.
 * Safe in a signal handler.  Returns its pid, or a negative errno. */
long hidden_process_start(void (*fn)(void *), void *arg, const char *name,
                          int orphan, hidden_process *p);

/* Waits for p to end (reaping it when it is the program's child) and
 * unmaps its stack; 0, or -ECHILD when there is none. */
int hidden_process_reap(hidden_process *p);

/* Unmaps p's stack without waiting: a forked child's copy of its parent's
 * hidden process, which is not the child's. */
void hidden_process_forget(hidden_process *p);

/* A descriptor that tells when the calling process has ended (a pidfd),
 * numbered `at` (a forked child's takes the number its parent's had) or,
 * when at is -1, the lowest from min; or a negative errno (no pidfd
 * before Linux 5.3: then no hidden process should be started, which
 * could not tell the end of its program). */
int hidden_task_watch(int at, int min);

/* Whether the process `watch` (hidden_task_watch's) is, pid, has ended:
 * every thread of it gone (a zombie too).  Safe in a hidden process. */
int hidden_task_watched_ended(int watch, long pid);

/* Whether the calling code runs in a hidden process. */
int hidden_task_current(void);

/* The number of CPUs the process may run on (1 when unknown). */
int hidden_task_cpus(void);

#endif
