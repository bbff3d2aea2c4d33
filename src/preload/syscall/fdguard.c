/*
 * fdguard.c - keeps the program's descriptor calls off memtap's trace
 * descriptors (see fdguard.h).  Closing it fails as if it were not open
 * (EBADF); making it a copy of another descriptor fails the same way
 * (otherwise the program's file would receive trace chunks); a range
 * closes everything in it but memtap's.
 */
#define _GNU_SOURCE
#include "fdguard.h"

#include "preload/fault/complete.h"
#include "preload/core/own_text.h"
#include "preload/record/tracer.h"

#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

int fdguard_fds(int fds[FDGUARD_MAX])
{
    int n = tracer_guarded_fds(fds);
    int mem = complete_fd();
    if (mem >= 0)
        fds[n++] = mem;
    for (int i = 1; i < n; i++) /* insertion sort of at most four */
        for (int j = i; j > 0 && fds[j - 1] > fds[j]; j--) {
            int t = fds[j];
            fds[j] = fds[j - 1];
            fds[j - 1] = t;
        }
    return n;
}

static int is_ours(long fd)
{
    int fds[FDGUARD_MAX], n = fdguard_fds(fds);
    for (int i = 0; i < n; i++)
        if (fd == fds[i])
            return 1;
    return 0;
}

/* close_range over [first, last] minus memtap's descriptors. */
static long close_range_around(unsigned first, unsigned last, unsigned flags)
{
    int fds[FDGUARD_MAX], n = fdguard_fds(fds);
    for (int i = 0; i < n; i++) {
        unsigned fd = (unsigned)fds[i];
        if (fd < first || fd > last)
            continue;
        if (fd > first) {
            long rc = raw_syscall3(SYS_close_range, first, fd - 1, flags);
            if (rc)
                return rc;
        }
        if (fd == last)
            return 0;
        first = fd + 1;
    }
    return raw_syscall3(SYS_close_range, first, last, flags);
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
