/*
 * own_text.h - system calls issued from libmemtap.so's own code.  The seccomp
 * filter lets syscall instructions inside libmemtap.so through untouched,
 * so every system call the fault engine makes on the program's behalf, or
 * for itself, goes through raw_syscall6() rather than libc.
 */
#ifndef MEMTAP_PRELOAD_OWN_TEXT_H
#define MEMTAP_PRELOAD_OWN_TEXT_H

#include "sys/rawsys.h"

/* Bounds of libmemtap.so's text (where raw_syscall6 lives). */
void own_text_range(unsigned long *start, unsigned long *end);

#endif
