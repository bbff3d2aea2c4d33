/*
 * bounce.c - read- and write-like system calls on traced buffers while
 * other threads run, made on buffers of memtap's instead: the program's
 * bytes go in and out through /proc/self/mem (complete.c), so no page of
 * the program is open, for every thread, while the call blocks.  The
 * plain calls (read, pread64, recvfrom, write, pwrite64, sendto), the
 * vector calls (readv, preadv, writev, pwritev and their 2 forms) and
 * recvmsg and sendmsg (on a copy of the msghdr).  Runs in the SIGSYS
 * handler: raw system calls, memory from mmap.
 */
#define _GNU_SOURCE
#include "bounce.h"
#include "preload/core/wait_call.h"

#include "complete.h"
#include "fault.h"
#include "preload/core/stop_world.h"
#include "sys/rawsys.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#define BOUNCE_MAX (64u << 20)

/* Whether a bounced call is one of these: its buffer in a[1], its length
 * in a[2]; *into when the kernel writes the buffer.  recvfrom and sendto
 * only when their address arguments are not traced (they stay where
 * they are). */
static int bounceable(long nr, const long *a, int *into)
{
    *into = nr == SYS_read || nr == SYS_pread64 || nr == SYS_recvfrom;
    switch (nr) {
    case SYS_read: case SYS_pread64: case SYS_write: case SYS_pwrite64:
        return 1;
    case SYS_recvfrom:
        return !(a[5] && traced_has((uintptr_t)a[5], sizeof(int))) &&
               !(a[4] && traced_has((uintptr_t)a[4], 1));
    case SYS_sendto:
        return !(a[4] && traced_has((uintptr_t)a[4], (size_t)a[5]));
    default:
        return 0;
    }
}

/* Bytes a bounced call read, copied to the program's buffer at to: they
 * must land, through an opened page if /proc/self/mem will not. */
static void land(uint64_t to, const void *from, size_t n)
{
    if (complete_poke(to, from, n) != 0) {
        traced_open_set o;
        traced_open(&o, to, n);
        memcpy((void *)(uintptr_t)to, from, n);
        traced_close(&o);
    }
}

/* read, pread64, recvfrom, write, pwrite64 and sendto on a traced buffer
 * while other threads run, or are being created (one that registers while
 * the call blocks would run beside its open pages): through a buffer of
 * memtap's, the program's bytes read or written through /proc/self/mem,
 * so no page of the program is open while the call blocks.  1 when done
 * so (*ret is the call's result). */
static int bounced_io(long nr, const long *a, long *ret, uint64_t unblock)
{
    int into;
    uint64_t buf = (uint64_t)a[1];
    size_t n = (size_t)a[2];
    if (!bounceable(nr, a, &into) || n == 0 ||
        n > BOUNCE_MAX || !traced_active() || !world_shared() ||
        complete_fd() < 0 || !traced_allows(buf, n, into))
        return 0; /* the kernel's own checks for anything else */
    size_t len = (n + 4095) & ~(size_t)4095;
    long m = raw_syscall6(SYS_mmap, 0, (long)len, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (RAW_FAILED(m))
        return 0;
    int done = into || complete_peek((void *)m, n, buf) == 0;
    if (done) {
        long b[6] = { a[0], m, a[2], a[3], a[4], a[5] };
        int caught;
        *ret = wait_call(nr, b, unblock, &caught);
        if (into && *ret > 0)
            land(buf, (const void *)m, (size_t)*ret);
    }
    raw_syscall3(SYS_munmap, m, len, 0);
    return done;
}

/* Whether a bounced vector call is one of these: its iovec array in a[1],
 * their count in a[2] (recvmsg and sendmsg: in the msghdr at a[1]); *into
 * when the kernel writes the buffers. */
static int vector_call(long nr, int *into)
{
    *into = nr == SYS_readv || nr == SYS_preadv || nr == SYS_preadv2 ||
            nr == SYS_recvmsg;
    return *into || nr == SYS_writev || nr == SYS_pwritev ||
           nr == SYS_pwritev2 || nr == SYS_sendmsg;
}

/* The call on memtap's buffers in place of the program's iovecs: the
 * vector calls' own form, or the program's msghdr (read into m) pointing
 * at them, what the kernel writes in it (lengths, flags) written back. */
static long call_bounced(long nr, const long *a, struct iovec *bounce,
                         long cnt, struct msghdr *m, uint64_t unblock)
{
    int caught;
    if (nr != SYS_recvmsg && nr != SYS_sendmsg) {
        long b[6] = { a[0], (long)bounce, cnt, a[3], a[4], a[5] };
        return wait_call(nr, b, unblock, &caught);
    }
    struct iovec *theirs = m->msg_iov;
    m->msg_iov = bounce;
    long b[6] = { a[0], (long)m, a[2], a[3], a[4], a[5] };
    long ret = wait_call(nr, b, unblock, &caught);
    m->msg_iov = theirs;
    if (nr == SYS_recvmsg)
        complete_poke((uint64_t)a[1], m, sizeof *m);
    return ret;
}

/* Where the iovecs of a bounceable call are (recvmsg and sendmsg: their
 * msghdr read into m): 0, or -1 when the call keeps the general path (an
 * unreadable argument, whose EFAULT is the kernel's to give; a traced
 * msghdr, name or control). */
static int iovecs_of(long nr, const long *a, struct msghdr *m, uint64_t *iov,
                     long *cnt)
{
    if (nr != SYS_recvmsg && nr != SYS_sendmsg) {
        *iov = (uint64_t)a[1];
        *cnt = a[2];
        return 0;
    }
    if (!a[1] || traced_has((uintptr_t)a[1], sizeof *m) ||
        complete_peek(m, sizeof *m, (uint64_t)a[1]) != 0 ||
        (m->msg_name && traced_has((uintptr_t)m->msg_name,
                                         m->msg_namelen ? m->msg_namelen : 1)) ||
        (m->msg_control &&
         traced_has((uintptr_t)m->msg_control,
                          m->msg_controllen ? m->msg_controllen : 1)))
        return -1;
    *iov = (uint64_t)(uintptr_t)m->msg_iov;
    *cnt = (long)m->msg_iovlen;
    return 0;
}

/* readv, preadv(2), writev, pwritev(2), recvmsg and sendmsg whose buffers
 * are all traced, while other threads run: as bounced_io, the same call
 * made on memtap's buffers (one per iovec, the array first in the same
 * mapping).  A call that mixes traced and untraced buffers keeps the
 * general path. */
static int bounced_vector_io(long nr, const long *a, long *ret,
                             uint64_t unblock)
{
    int into;
    uint64_t at;
    long cnt;
    struct msghdr msg;
    if (!vector_call(nr, &into) || !traced_active() ||
        !world_shared() || complete_fd() < 0 ||
        iovecs_of(nr, a, &msg, &at, &cnt) != 0 || cnt <= 0 || cnt > 1024)
        return 0;
    size_t head = ((size_t)cnt * sizeof(struct iovec) + 4095) & ~(size_t)4095;
    long m = raw_syscall6(SYS_mmap, 0, (long)head, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (RAW_FAILED(m))
        return 0;
    struct iovec *orig = (struct iovec *)m;
    size_t total = 0;
    int ok = complete_peek(orig, (size_t)cnt * sizeof *orig, at) == 0;
    for (long i = 0; ok && i < cnt; i++) {
        total += orig[i].iov_len;
        ok = total <= BOUNCE_MAX &&
             (orig[i].iov_len == 0 ||
              traced_allows((uint64_t)(uintptr_t)orig[i].iov_base,
                                  orig[i].iov_len, into));
    }
    size_t len = ((size_t)cnt * sizeof(struct iovec) + total + 4095) &
                 ~(size_t)4095;
    long b = ok && total ? raw_syscall6(SYS_mmap, 0, (long)len,
                                        PROT_READ | PROT_WRITE,
                                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                         : -1;
    int done = !RAW_FAILED(b);
    if (done) {
        struct iovec *bounce = (struct iovec *)b;
        uint8_t *data = (uint8_t *)(bounce + cnt);
        for (long i = 0; done && i < cnt; i++) {
            bounce[i].iov_base = data;
            bounce[i].iov_len = orig[i].iov_len;
            done = into || orig[i].iov_len == 0 ||
                   complete_peek(data, orig[i].iov_len,
                                 (uint64_t)(uintptr_t)orig[i].iov_base) == 0;
            data += orig[i].iov_len;
        }
        if (done)
            *ret = call_bounced(nr, a, bounce, cnt, &msg, unblock);
        for (long i = 0, left = done && into ? *ret : 0; left > 0; i++) {
            size_t n = (size_t)left < orig[i].iov_len ? (size_t)left
                                                       : orig[i].iov_len;
            if (n)
                land((uint64_t)(uintptr_t)orig[i].iov_base,
                     bounce[i].iov_base, n);
            left -= (long)n;
        }
        raw_syscall3(SYS_munmap, b, (long)len, 0);
    }
    raw_syscall3(SYS_munmap, m, (long)head, 0);
    return done;
}

/* The length of the string at addr, its NUL included, read into to (at
 * most cap bytes); 0 when it is longer or cannot be read. */
static size_t peek_string(char *to, size_t cap, uint64_t addr)
{
    for (size_t have = 0; have < cap;) {
        /* up to the next 256-byte boundary: never a page past the NUL */
        size_t step = 256 - (size_t)((addr + have) & 255);
        if (step > cap - have)
            step = cap - have;
        if (complete_peek(to + have, step, addr + have) != 0)
            return 0;
        for (size_t i = 0; i < step; i++)
            if (to[have + i] == '\0')
                return have + i + 1;
        have += step;
    }
    return 0;
}

/* Bytes a moved argument may take: a path's. */
#define BOUNCE_STRING_MAX 4096u

int bounce_args_in(bounce_args *b, const long *a, const bounce_arg *arg)
{
    memset(b, 0, sizeof *b);
    memcpy(b->a, a, sizeof b->a);
    if (!traced_active() || !world_shared() || complete_fd() < 0)
        return -1;
    size_t room[6] = { 0 }, total = 0;
    for (int i = 0; i < 6; i++) {
        uint64_t at = (uint64_t)a[i];
        int string = arg[i].kind == BOUNCE_STRING;
        size_t n = string ? BOUNCE_STRING_MAX : arg[i].n;
        if (arg[i].kind == BOUNCE_KEEP || !at || n == 0 ||
            !traced_has(at, string ? 1 : n))
            continue;
        /* memory the program itself may not write (a guard page it made
         * inaccessible) is the kernel's to refuse: moved, the call would
         * succeed and write there through /proc/self/mem (chromium
         * checks its guard pages with a getrlimit that must fail) */
        if (n > BOUNCE_MAX || !traced_allows(at, string ? 1 : n, !string))
            return -1;
        b->at[i] = at;
        b->n[i] = n;
        b->bytes[i] = !string;
        room[i] = (n + 15) & ~(size_t)15;
        total += room[i];
    }
    if (!total)
        return -1;
    b->half = total; /* the copies, then the originals */
    b->len = (2 * total + 4095) & ~(size_t)4095;
    b->map = raw_syscall6(SYS_mmap, 0, (long)b->len, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (RAW_FAILED(b->map))
        return -1;
    uint8_t *copy = (uint8_t *)b->map;
    for (int i = 0; i < 6; copy += room[i], i++) {
        if (!b->at[i])
            continue;
        int got = b->bytes[i]
                      ? complete_peek(copy, b->n[i], b->at[i]) == 0
                      : (b->n[i] = peek_string((char *)copy, b->n[i], b->at[i])) != 0;
        if (!got) { /* the kernel's to refuse, or a longer string */
            raw_syscall3(SYS_munmap, b->map, (long)b->len, 0);
            memcpy(b->a, a, sizeof b->a);
            return -1;
        }
        if (b->bytes[i])
            memcpy(copy + total, copy, b->n[i]);
        b->a[i] = (long)(uintptr_t)copy;
    }
    return 0;
}

void bounce_args_out(bounce_args *b)
{
    for (int i = 0; i < 6; i++) {
        if (!b->at[i] || !b->bytes[i])
            continue;
        const uint8_t *now = (const uint8_t *)(uintptr_t)b->a[i];
        const uint8_t *was = now + b->half;
        for (size_t k = 0; k < b->n[i];) {
            if (now[k] == was[k]) {
                k++;
                continue;
            }
            size_t end = k + 1;
            while (end < b->n[i] && now[end] != was[end])
                end++;
            land(b->at[i] + k, now + k, end - k);
            k = end;
        }
    }
    raw_syscall3(SYS_munmap, b->map, (long)b->len, 0);
}

int bounce_io(long nr, const long *a, long *ret, uint64_t unblock)
{
    return bounced_io(nr, a, ret, unblock) ||
           bounced_vector_io(nr, a, ret, unblock);
}
