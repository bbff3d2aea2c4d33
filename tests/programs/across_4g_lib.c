/*
 * across_4g_lib.c - a library whose code lies across a 4 GiB boundary:
 * linked at 0x3fffe0000 (the loader takes the link address as its hint),
 * a 256 KiB function first, so that across_4g_read, and the system call
 * it makes itself (not through the C library), lies above 0x400000000.
 */
#include <sys/syscall.h>

__attribute__((noinline, used)) void across_4g_padding(void)
{
    __asm__ volatile(".skip 0x40000, 0x90");
}

long across_4g_read(int fd, void *buf, long n)
{
    long ret;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "0"((long)SYS_read), "D"((long)fd), "S"(buf), "d"(n)
                     : "rcx", "r11", "memory");
    return ret;
}
