/*
 * fdguard.c - keeps the program's descriptor calls off memtap's trace
 * descriptor (see fdguard.h).  Closing it fails as if it were not open
 * (EBADF); making it a copy of another descriptor fails the same way
 * (otherwise the program's file would receive trace chunks); a range
 * closes everything in it but memtap's.
 */
#define _GNU_SOURCE
#include "fdguard.h"

#include "rawsys.h"
#include "tracer.h"

#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

static int is_ours(long fd)
{
    int ours = tracer_fd();
    return ours >= 0 && fd == ours;
}

static long close_range_around(unsigned first, unsigned last, unsigned flags)
{
    int ours = tracer_fd();
    if (ours < 0 || (unsigned)ours < first || (unsigned)ours > last)
        return raw_syscall3(SYS_close_range, first, last, flags);
    long rc = 0;
    if ((unsigned)ours > first)
        rc = raw_syscall3(SYS_close_range, first, (unsigned)ours - 1, flags);
    if (rc == 0 && (unsigned)ours < last)
        rc = raw_syscall3(SYS_close_range, (unsigned)ours + 1, last, flags);
    return rc;
}

int fdguard_syscall(long nr, const long *a, long *ret)
{
    switch (nr) {
    case SYS_close:
        *ret = is_ours(a[0]) ? -EBADF : raw_syscall3(nr, a[0], 0, 0);
        return 1;
    case SYS_dup2:
    case SYS_dup3:
        *ret = is_ours(a[1]) ? -EBADF : raw_syscall3(nr, a[0], a[1], a[2]);
        return 1;
    case SYS_close_range:
        *ret = close_range_around((unsigned)a[0], (unsigned)a[1],
                                  (unsigned)a[2]);
        return 1;
    default:
        return 0;
    }
}

static int result(long rc)
{
    if (rc < 0 && rc > -4096) {
        errno = (int)-rc;
        return -1;
    }
    return (int)rc;
}

static int guarded(long nr, long a0, long a1, long a2)
{
    long a[6] = { a0, a1, a2, 0, 0, 0 }, rc;
    fdguard_syscall(nr, a, &rc);
    return result(rc);
}

MEMTAP_EXPORT int close(int fd) { return guarded(SYS_close, fd, 0, 0); }

MEMTAP_EXPORT int dup2(int old, int fd)
{
    return guarded(SYS_dup2, old, fd, 0);
}

MEMTAP_EXPORT int dup3(int old, int fd, int flags)
{
    return guarded(SYS_dup3, old, fd, flags);
}

MEMTAP_EXPORT int close_range(unsigned first, unsigned last, int flags)
{
    return guarded(SYS_close_range, first, last, flags);
}

MEMTAP_EXPORT void closefrom(int lowfd)
{
    if (lowfd >= 0)
        close_range_around((unsigned)lowfd, ~0u, 0);
}
