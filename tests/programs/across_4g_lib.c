/*
 * across_4g_lib.c - a library whose code lies across a 4 GiB boundary:
 * linked at 0x3fffe0000 (the loader takes the link address as its hint),
 * a 256 KiB function first, so that across_4g_read, and the system call
 * it makes itself (not through the C library), lies above 0x400000000.
 */
#include "raw_read.h"

__attribute__((noinline, used)) void across_4g_padding(void)
{
    __asm__ volatile(".skip 0x40000, 0x90");
}

long across_4g_read(int fd, void *buf, long n)
{
    return raw_read_syscall(fd, buf, n);
}
