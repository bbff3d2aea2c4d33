/*
 * syscall_table.h - the system calls memtap emulates and what their
 * arguments point at (syscall_table.c): which memory a call's buffers
 * are, how long, and whether the kernel stores into them or fetches.
 */
#ifndef MEMTAP_PRELOAD_SYSCALL_TABLE_H
#define MEMTAP_PRELOAD_SYSCALL_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "preload/fault/bounce.h"

/* How an argument points at memory. */
enum {
    A_NONE = 0,
    A_LEN,      /* length in argument `n` */
    A_RET,      /* length is the result (kernel stores up to arg n bytes) */
    A_FIXED,    /* n bytes */
    A_STR,      /* NUL-terminated string (opened: 2 pages) */
    A_IOV,      /* iovec array, count in argument n */
    A_MSG,      /* struct msghdr */
    A_MMSG,     /* struct mmsghdr array, count in argument n */
    A_ARRAY,    /* array of `size`-byte elements, count in argument n */
    A_FDSET,    /* select's fd_set, as long as argument n's fds need */
    A_NESTED,   /* n bytes holding pointers of their own (pselect6's
                   sigset and its size): a call with one is not moved */
};

typedef struct arg_spec {
    uint8_t how;
    uint16_t n;
    uint16_t size;
} arg_spec;

/* Bytes of the memory that argument spec x points at, as the arguments a
 * say; 0 for those of no fixed extent (strings, iovecs, messages). */
uint64_t syscall_arg_bytes(const arg_spec *x, const long *a);

typedef struct sys_spec {
    int nr;
    char block;          /* 'W' kernel stores, 'G' kernel fetches, 0 none */
    char movable;        /* its arguments may go through memtap's buffer */
    arg_spec args[6];
} sys_spec;

/* The table's entry of call nr, or NULL. */
const sys_spec *syscall_spec(long nr);

/* The calls whose buffers are recorded as block events (the static
 * engine traps them), into out, at most max; how many. */
size_t syscall_block_calls(int *out, size_t max);

/* The entry of call nr as arguments a use it: futex's by its operation,
 * ioctl's by its request, fcntl's by its command (each made in *out),
 * any other call's the table's. */
const sys_spec *syscall_call_spec(long nr, const long *a, sys_spec *out);

/* Whether the call of entry sp may have its arguments (a) moved into
 * memtap's buffers (bounce.h), and how each is, in arg. */
int syscall_movable(const sys_spec *sp, const long *a, bounce_arg arg[6]);

#endif
