/*
 * world.h - stopping the other threads of the traced process while a page
 * is open, so that no thread touches it unseen (mprotect is process-wide).
 * Each registered thread, signalled, parks in a handler until the world
 * resumes.  Threads that cannot be parked (they block the signal) make the
 * engine fall back to counting exposed windows.
 */
#ifndef MEMTAP_PRELOAD_WORLD_H
#define MEMTAP_PRELOAD_WORLD_H

/* Installs the park handler; 0 on success. */
int world_init(void);
/* Registers / releases the calling thread. */
void world_thread_begin(void);
void world_thread_end(void);
/* In a forked child: only the calling thread remains. */
void world_after_fork(void);

/* Stops every other registered thread; returns 1 if they all parked (the
 * window is exact), 0 if some could not be stopped (the window is exposed).
 * Must be called with asynchronous signals blocked; nests. */
int world_stop(void);
void world_resume(void);

/* More than one registered thread: windows need the world stopped. */
int world_shared(void);
int world_owns_signal(int sig);

#endif
