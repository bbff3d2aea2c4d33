/*
 * raw_read_lib.c - a library that makes a system call itself (read, with
 * its own syscall instruction, not through the C library), for programs
 * that load it with dlopen (dlopen_raw_read.c).
 */
#include <sys/syscall.h>

long raw_read(int fd, void *buf, long n)
{
    long ret;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "0"((long)SYS_read), "D"((long)fd), "S"(buf), "d"(n)
                     : "rcx", "r11", "memory");
    return ret;
}
