/*
 * raw_read_lib.c - a library that makes a system call itself (read, with
 * its own syscall instruction, not through the C library), for programs
 * that load it with dlopen (dlopen_raw_read.c).
 */
#include "raw_read.h"

long raw_read(int fd, void *buf, long n)
{
    return raw_read_syscall(fd, buf, n);
}
