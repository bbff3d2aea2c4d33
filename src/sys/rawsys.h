/*
 * sys/rawsys.h - system calls issued by memtap's code inside traced
 * processes (the preload library, the shadow-memory library linked into
 * it).  The preload library's seccomp filter lets syscall instructions in
 * its own text through untouched, so such code never calls libc's wrappers:
 * they would trap, and some take locks a signal handler could find held.
 */
#ifndef MEMTAP_SYS_RAWSYS_H
#define MEMTAP_SYS_RAWSYS_H

#include <sys/mman.h>
#include <sys/syscall.h>

/* Returns the kernel's result: -errno on failure. */
long raw_syscall6(long nr, long a, long b, long c, long d, long e, long f);

#define raw_syscall3(nr, a, b, c) \
    raw_syscall6(nr, (long)(a), (long)(b), (long)(c), 0, 0, 0)

/* The time on `clock` (CLOCK_MONOTONIC, ...) in nanoseconds. */
static inline long long raw_clock_ns(int clock)
{
    struct { long sec, nsec; } t = { 0, 0 };
    raw_syscall3(SYS_clock_gettime, clock, &t, 0);
    return (long long)t.sec * 1000000000ll + t.nsec;
}

/* A result that is an error (-4095..-1) rather than an address or count. */
#define RAW_FAILED(r) ((unsigned long)(r) > -4096ul)

/* Memory for memtap's own use, straight from the kernel: never in the
 * program's heap, never traced.  NULL when the kernel refuses. */
static inline void *raw_map(unsigned long size)
{
    long p = raw_syscall6(SYS_mmap, 0, (long)size, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return RAW_FAILED(p) ? (void *)0 : (void *)p;
}

static inline void raw_unmap(void *p, unsigned long size)
{
    raw_syscall3(SYS_munmap, p, size, 0);
}

/* What memtap says to the user from inside a traced process: n bytes to
 * standard error, by the raw system call (no stdio, no lock, nothing a
 * signal handler could find held, not seen by the program's write
 * wrappers). */
#define raw_say(text, n) ((void)raw_syscall3(SYS_write, 2, (text), (n)))

/* A string literal's bytes, its NUL left out. */
#define raw_say_lit(lit) raw_say(lit, sizeof lit - 1)

/* The strings of a NULL-terminated list, one after the other (a message
 * with names in it; numbers: preload/fmt.h). */
static inline void raw_say_parts(const char *const *parts)
{
    for (; *parts; parts++)
        raw_say(*parts, __builtin_strlen(*parts));
}

#endif
