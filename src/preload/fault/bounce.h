/*
 * bounce.h - system calls on traced buffers made through memtap's buffers
 * (bounce.c).
 */
#ifndef MEMTAP_PRELOAD_BOUNCE_H
#define MEMTAP_PRELOAD_BOUNCE_H

/* Makes system call nr with arguments a through buffers of memtap's when
 * it is a read- or write-like call whose buffers are all traced and other
 * threads run: 1 then, with the call's result in *ret; 0 when the caller
 * is to make the call its own way. */
int bounce_io(long nr, const long *a, long *ret);

#endif
