/*
 * stop_world.h - stopping the other threads of the traced process while a page
 * is open, so that no thread touches it unseen (mprotect is process-wide).
 * Each registered thread, signalled, parks in a handler until the world
 * resumes; one waiting in a system call memtap makes for it counts as
 * parked.  A thread that cannot be parked in time (waiting in vfork, say)
 * makes that window exposed, not the ones after it returns.
 */
#ifndef MEMTAP_PRELOAD_STOP_WORLD_H
#define MEMTAP_PRELOAD_STOP_WORLD_H

/* Installs the park handler; 0 on success. */
int world_init(void);
/* Registers / releases the calling thread. */
void world_thread_begin(void);
void world_thread_end(void);
/* The creator of a thread announces it (+1) before the thread exists and
 * withdraws it (-1) if creation fails; the new thread, first thing, calls
 * world_thread_announced() and then world_thread_begin(), which ends its
 * pending state.  A pending thread makes the world shared: windows opened
 * meanwhile stop the world, and the new thread, registering, parks until
 * they close instead of running the program's code on an open page. */
void world_thread_created(int delta);
void world_thread_announced(void);
/* In a forked child: only the calling thread remains. */
void world_after_fork(void);

/* Stops every other registered thread; returns 1 if they all parked (the
 * window is exact), 0 if some could not be stopped (the window is exposed).
 * Must be called with asynchronous signals blocked; nests. */
int world_stop(void);
void world_resume(void);
/* Lets the others run whatever this thread's stop depth (returned: 0 when
 * it had none); world_reacquire stops them again to that depth.  Both with
 * asynchronous signals blocked. */
int world_release(void);
void world_reacquire(int depth);

/* Around a system call memtap makes for the program with asynchronous
 * signals blocked (its handlers' mask), which may wait long (a futex wait,
 * a read): a stop meanwhile counts the thread as parked, since it touches
 * no page of the program's until it returns, and the thread, returning,
 * parks if the world is stopped. */
void world_wait_begin(void);
void world_wait_end(void);

/* More than one thread, registered or being created: windows need the
 * world stopped. */
int world_shared(void);
/* Another registered thread runs (a window that does not stop the world,
 * such as a blocking system call, is exposed to it).  A thread still being
 * created is not counted: it runs none of the program's code during such a
 * window unless it registers in it, which is not detected. */
int world_others_registered(void);

#endif
