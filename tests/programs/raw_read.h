/*
 * raw_read.h - read(2) made with a syscall instruction inlined into the
 * caller (not through the C library): for libraries whose system calls
 * the filter must trap from their own code (across_4g_lib.c,
 * raw_read_lib.c).
 */
#ifndef MEMTAP_TESTS_RAW_READ_H
#define MEMTAP_TESTS_RAW_READ_H

#include <sys/syscall.h>

__attribute__((always_inline)) static inline long
raw_read_syscall(int fd, void *buf, long n)
{
    long ret;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "0"((long)SYS_read), "D"((long)fd), "S"(buf), "d"(n)
                     : "rcx", "r11", "memory");
    return ret;
}

#endif
