/*
 * bounce.h - system calls on traced buffers made through memtap's buffers
 * (bounce.c).
 */
#ifndef MEMTAP_PRELOAD_BOUNCE_H
#define MEMTAP_PRELOAD_BOUNCE_H

#include <stdint.h>

/* Makes system call nr with arguments a through buffers of memtap's when
 * it is a read- or write-like call whose buffers are all traced and other
 * threads run: 1 then, with the call's result in *ret; 0 when the caller
 * is to make the call its own way.  The signals in `unblock` (bit sig -
 * 1) may interrupt it meanwhile (wait_call.h: *ret may then be -EINTR or
 * WAIT_CALL_RESTART). */
int bounce_io(long nr, const long *a, long *ret, uint64_t unblock);

/* What an argument of a call points at, for bounce_args_in: nothing memtap
 * moves (not a pointer, or memory it cannot size), a NUL-terminated
 * string the kernel reads, or n bytes the kernel may read and write. */
enum { BOUNCE_KEEP = 0, BOUNCE_STRING, BOUNCE_BYTES };
typedef struct bounce_arg {
    unsigned char kind;
    unsigned long n;
} bounce_arg;

/* A call's arguments with those in traced memory moved into a buffer of
 * memtap's (bounce_args_in), and the program's bytes as they were. */
typedef struct bounce_args {
    long a[6];                /* the call's arguments, moved ones replaced */
    unsigned long at[6];      /* a moved one's address in the program, or 0 */
    unsigned long n[6];       /* its bytes */
    unsigned char bytes[6];   /* it is bytes the kernel may write */
    long map;                 /* the buffer: copies, then the originals */
    unsigned long half, len;  /* where the originals begin; its bytes */
} bounce_args;

/* Moves the arguments of a call (a, described by arg) that lie in traced
 * memory into a buffer of memtap's while other threads run, so that no
 * page of the program is open for every thread while the call blocks:
 * 0 then (b->a are the call's arguments); -1 when the call is to keep its
 * own way (no other thread, none traced, a string longer than a path, or
 * bytes /proc/self/mem will not give). */
int bounce_args_in(bounce_args *b, const long *a, const bounce_arg *arg);

/* After the call: the bytes the kernel changed in each moved argument go
 * back into the program's memory (those it left alone stay as other
 * threads may have made them meanwhile), and the buffer goes. */
void bounce_args_out(bounce_args *b);

#endif
