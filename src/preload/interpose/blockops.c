/*
 * blockops.c - block operations recorded as single events (MadT Table I):
 * Y for copies (memcpy, strcpy, ...), W for block stores (memset, read,
 * fread, ...), G for block fetches (write, fwrite, send, ...).  The real
 * function runs with memtap's own-access mode on: the protected pages it
 * touches are opened silently (and closed when it returns) instead of being
 * recorded access by access.  The event's pc is the call site.
 */
#define _GNU_SOURCE
#include "preload/fault/fault.h"
#include "preload/memmap/traced_set.h"
#include "preload/core/hidden_task.h"
#include "rt/rewritten.h"
#include "preload/record/tracer.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#define CALL_SITE ((uint64_t)(uintptr_t)__builtin_return_address(0))
#define U(p) ((uint64_t)(uintptr_t)(p))

static struct {
    void *(*memcpy)(void *, const void *, size_t);
    void *(*memmove)(void *, const void *, size_t);
    void *(*mempcpy)(void *, const void *, size_t);
    void *(*memset)(void *, int, size_t);
    char *(*strcpy)(char *, const char *);
    char *(*strncpy)(char *, const char *, size_t);
    char *(*stpcpy)(char *, const char *);
    char *(*strcat)(char *, const char *);
    char *(*strncat)(char *, const char *, size_t);
    ssize_t (*read)(int, void *, size_t);
    ssize_t (*write)(int, const void *, size_t);
    ssize_t (*pread)(int, void *, size_t, off_t);
    ssize_t (*pwrite)(int, const void *, size_t, off_t);
    ssize_t (*recv)(int, void *, size_t, int);
    ssize_t (*send)(int, const void *, size_t, int);
    size_t (*fread)(void *, size_t, size_t, FILE *);
    size_t (*fwrite)(const void *, size_t, size_t, FILE *);
} real;

void blockops_resolve(void)
{
#define RESOLVE(name) *(void **)&real.name = dlsym(RTLD_NEXT, #name)
    RESOLVE(memcpy);
    RESOLVE(memmove);
    RESOLVE(mempcpy);
    RESOLVE(memset);
    RESOLVE(strcpy);
    RESOLVE(strncpy);
    RESOLVE(stpcpy);
    RESOLVE(strcat);
    RESOLVE(strncat);
    RESOLVE(read);
    RESOLVE(write);
    RESOLVE(pread);
    RESOLVE(pwrite);
    RESOLVE(recv);
    RESOLVE(send);
    RESOLVE(fread);
    RESOLVE(fwrite);
#undef RESOLVE
}

/* The real function, resolved on first use when a call comes before the
 * start-up resolution (memtap's own start-up reads files, for one). */
#define NEXT(name) (real.name ? real.name : (blockops_resolve(), real.name))

/* Copies and fills with the string instructions, for calls that come
 * before the real functions are known (the loader's early calls), from
 * memtap's hidden threads and from the fault engine's handlers (libc's
 * versions read tunables in libc's data, which the fault engine may have
 * protected: a handler would fault again, and open and close that page). */
static void *bytes_move(void *d, const void *s, size_t n)
{
    void *to = d;
    if ((uintptr_t)d <= (uintptr_t)s || (uintptr_t)d - (uintptr_t)s >= n) {
        __asm__ volatile("rep movsb" : "+D"(to), "+S"(s), "+c"(n) : : "memory");
    } else if (n) { /* overlapping, destination above: copy backwards */
        to = (char *)d + n - 1;
        s = (const char *)s + n - 1;
        __asm__ volatile("std\n\trep movsb\n\tcld"
                         : "+D"(to), "+S"(s), "+c"(n) : : "memory");
    }
    return d;
}

static void *bytes_fill(void *d, int c, size_t n)
{
    void *to = d;
    __asm__ volatile("rep stosb" : "+D"(to), "+c"(n) : "a"(c) : "memory");
    return d;
}

/* Whether the calls go to the functions above. */
static int own_copies(void)
{
    return !real.memcpy || hidden_task_current() || fault_in_handler();
}

static int recording(void)
{
    return tracer_enabled() && (traced_active() || rewritten_recording()) &&
           !fault_in_memtap();
}

/* Around the real function: its accesses are the block event's, not the
 * program's (the fault engine opens pages silently, the static engine
 * drops what rewritten code logs). */
static void exclusive_begin(void)
{
    if (fault_enabled())
        fault_exclusive_begin();
    else
        fault_own_begin(); /* nothing is protected: nothing to stop */
    rewritten_own_begin();
}

static void exclusive_end(void)
{
    rewritten_own_end();
    if (fault_enabled())
        fault_exclusive_end();
    else
        fault_own_end();
}

/* Around the real I/O function: the program's call, made in own mode (its
 * bytes are the block event's); begin's answer goes to end. */
static int own_begin(void)
{
    int was = fault_program_call_begin();
    rewritten_own_begin();
    return was;
}

static void own_end(int was)
{
    rewritten_own_end();
    fault_program_call_end(was);
}

MEMTAP_EXPORT void *memcpy(void *d, const void *s, size_t n)
{
    if (own_copies())
        return bytes_move(d, s, n);
    if (!recording())
        return real.memcpy(d, s, n);
    exclusive_begin();
    void *r = real.memcpy(d, s, n);
    exclusive_end();
    tracer_record(MEMTAP_EV_COPY, 0, CALL_SITE, U(d), n, U(s), 0);
    return r;
}

MEMTAP_EXPORT void *memmove(void *d, const void *s, size_t n)
{
    if (!real.memmove || own_copies())
        return bytes_move(d, s, n);
    if (!recording())
        return real.memmove(d, s, n);
    exclusive_begin();
    void *r = real.memmove(d, s, n);
    exclusive_end();
    tracer_record(MEMTAP_EV_COPY, 0, CALL_SITE, U(d), n, U(s), 0);
    return r;
}

MEMTAP_EXPORT void *mempcpy(void *d, const void *s, size_t n)
{
    if (!real.mempcpy || own_copies())
        return (char *)bytes_move(d, s, n) + n;
    if (!recording())
        return real.mempcpy(d, s, n);
    exclusive_begin();
    void *r = real.mempcpy(d, s, n);
    exclusive_end();
    tracer_record(MEMTAP_EV_COPY, 0, CALL_SITE, U(d), n, U(s), 0);
    return r;
}

MEMTAP_EXPORT void *memset(void *d, int c, size_t n)
{
    if (!real.memset || own_copies())
        return bytes_fill(d, c, n);
    if (!recording())
        return real.memset(d, c, n);
    exclusive_begin();
    void *r = real.memset(d, c, n);
    exclusive_end();
    tracer_record(MEMTAP_EV_BLOCK_STORE, 0, CALL_SITE, U(d), n, 0, 0);
    return r;
}

MEMTAP_EXPORT char *strcpy(char *d, const char *s)
{
    if (!recording())
        return NEXT(strcpy)(d, s);
    exclusive_begin();
    char *r = NEXT(strcpy)(d, s);
    size_t n = strlen(d) + 1;
    exclusive_end();
    tracer_record(MEMTAP_EV_COPY, 0, CALL_SITE, U(d), n, U(s), 0);
    return r;
}

MEMTAP_EXPORT char *stpcpy(char *d, const char *s)
{
    if (!recording())
        return NEXT(stpcpy)(d, s);
    exclusive_begin();
    char *r = NEXT(stpcpy)(d, s);
    exclusive_end();
    tracer_record(MEMTAP_EV_COPY, 0, CALL_SITE, U(d), (uint64_t)(r - d) + 1,
                U(s), 0);
    return r;
}

MEMTAP_EXPORT char *strncpy(char *d, const char *s, size_t n)
{
    if (!recording())
        return NEXT(strncpy)(d, s, n);
    exclusive_begin();
    char *r = NEXT(strncpy)(d, s, n);
    size_t copied = strnlen(s, n);
    exclusive_end();
    /* strncpy stores n bytes (padding with NULs) and reads the string */
    tracer_record(MEMTAP_EV_COPY, 0, CALL_SITE, U(d), n,
                U(s), copied < n ? copied + 1 : n);
    return r;
}

MEMTAP_EXPORT char *strcat(char *d, const char *s)
{
    if (!recording())
        return NEXT(strcat)(d, s);
    exclusive_begin();
    size_t at = strlen(d);
    char *r = NEXT(strcat)(d, s);
    size_t n = strlen(d + at) + 1;
    exclusive_end();
    tracer_record(MEMTAP_EV_COPY, 0, CALL_SITE, U(d) + at, n, U(s), 0);
    return r;
}

MEMTAP_EXPORT char *strncat(char *d, const char *s, size_t n)
{
    if (!recording())
        return NEXT(strncat)(d, s, n);
    exclusive_begin();
    size_t at = strlen(d);
    char *r = NEXT(strncat)(d, s, n);
    size_t copied = strlen(d + at) + 1;
    exclusive_end();
    tracer_record(MEMTAP_EV_COPY, 0, CALL_SITE, U(d) + at, copied, U(s), 0);
    return r;
}

/* I/O: the kernel or the C library moves bytes between a user buffer and
 * a file; one W (into the buffer) or G (out of it) for what was moved. */
static void record_io(uint8_t kind, const void *buf, ssize_t n, uint64_t site)
{
    /* a page the call needed open while others ran was counted exposed
     * where it was opened (syscalls.c) */
    if (n > 0)
        tracer_record(kind, 0, site, U(buf), (uint64_t)n, 0, 0);
}

MEMTAP_EXPORT ssize_t read(int fd, void *buf, size_t n)
{
    if (!recording())
        return NEXT(read)(fd, buf, n);
    int own = own_begin();
    ssize_t r = NEXT(read)(fd, buf, n);
    own_end(own);
    record_io(MEMTAP_EV_BLOCK_STORE, buf, r, CALL_SITE);
    return r;
}

MEMTAP_EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
    if (!recording())
        return NEXT(write)(fd, buf, n);
    int own = own_begin();
    ssize_t r = NEXT(write)(fd, buf, n);
    own_end(own);
    record_io(MEMTAP_EV_BLOCK_FETCH, buf, r, CALL_SITE);
    return r;
}

MEMTAP_EXPORT ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
    if (!recording())
        return NEXT(pread)(fd, buf, n, off);
    int own = own_begin();
    ssize_t r = NEXT(pread)(fd, buf, n, off);
    own_end(own);
    record_io(MEMTAP_EV_BLOCK_STORE, buf, r, CALL_SITE);
    return r;
}

MEMTAP_EXPORT ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    if (!recording())
        return NEXT(pwrite)(fd, buf, n, off);
    int own = own_begin();
    ssize_t r = NEXT(pwrite)(fd, buf, n, off);
    own_end(own);
    record_io(MEMTAP_EV_BLOCK_FETCH, buf, r, CALL_SITE);
    return r;
}

MEMTAP_EXPORT ssize_t recv(int fd, void *buf, size_t n, int flags)
{
    if (!recording())
        return NEXT(recv)(fd, buf, n, flags);
    int own = own_begin();
    ssize_t r = NEXT(recv)(fd, buf, n, flags);
    own_end(own);
    record_io(MEMTAP_EV_BLOCK_STORE, buf, r, CALL_SITE);
    return r;
}

MEMTAP_EXPORT ssize_t send(int fd, const void *buf, size_t n, int flags)
{
    if (!recording())
        return NEXT(send)(fd, buf, n, flags);
    int own = own_begin();
    ssize_t r = NEXT(send)(fd, buf, n, flags);
    own_end(own);
    record_io(MEMTAP_EV_BLOCK_FETCH, buf, r, CALL_SITE);
    return r;
}

/* libc's own copies between a FILE's buffer and the kernel or the caller
 * happen inside fread/fwrite, untraced: what they leave in the buffer is
 * recorded as a block store, so that the buffer is known written when it
 * is read later (fgets after fread) or handed to write(2) (fclose). */
typedef struct stdio_span {
    char *base, *end;
} stdio_span;

static stdio_span stdio_read_span(FILE *f)
{
    return (stdio_span){ f->_IO_read_base, f->_IO_read_end };
}

static stdio_span stdio_write_span(FILE *f)
{
    return (stdio_span){ f->_IO_write_base, f->_IO_write_ptr };
}

/* Records the part of `now` that was not in `was` (same buffer: what was
 * appended; a new buffer or a refill: all of it). */
static void stdio_stored(stdio_span was, stdio_span now, uint64_t site)
{
    char *from = now.base == was.base && now.end >= was.end ? was.end
                                                             : now.base;
    if (now.end && now.end > from)
        tracer_record(MEMTAP_EV_BLOCK_STORE, 0, site, U(from),
                    (uint64_t)(now.end - from), 0, 0);
}

MEMTAP_EXPORT size_t fread(void *buf, size_t size, size_t count, FILE *f)
{
    if (!recording())
        return NEXT(fread)(buf, size, count, f);
    int own = own_begin(); /* FILE is the program's: reading it is memtap's */
    stdio_span was = stdio_read_span(f);
    size_t r = NEXT(fread)(buf, size, count, f);
    stdio_span now = stdio_read_span(f);
    own_end(own);
    stdio_stored(was, now, CALL_SITE);
    record_io(MEMTAP_EV_BLOCK_STORE, buf, (ssize_t)(r * size), CALL_SITE);
    return r;
}

MEMTAP_EXPORT size_t fwrite(const void *buf, size_t size, size_t count,
                            FILE *f)
{
    if (!recording())
        return NEXT(fwrite)(buf, size, count, f);
    int own = own_begin();
    stdio_span was = stdio_write_span(f);
    size_t r = NEXT(fwrite)(buf, size, count, f);
    stdio_span now = stdio_write_span(f);
    own_end(own);
    record_io(MEMTAP_EV_BLOCK_FETCH, buf, (ssize_t)(r * size), CALL_SITE);
    stdio_stored(was, now, CALL_SITE);
    return r;
}
