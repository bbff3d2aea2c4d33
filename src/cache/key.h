/*
 * cache/key.h - the name of a rewritten copy in memtap's cache: a hash of
 * the original file's identity (device, inode, size, modification and
 * change times) and of the settings it was rewritten with (the salt),
 * then its base name; and the seal of a copy the verifier passed, its own
 * identity then.  Shared by the memtap command, which fills the cache,
 * and the loader audit module, which finds copies in it while a program
 * runs; header-only so that the audit module links nothing of memtap's.
 */
#ifndef MEMTAP_CACHE_KEY_H
#define MEMTAP_CACHE_KEY_H

#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sys/hash.h"

/* "<16 hex digits>-" before the base name */
#define CACHE_KEY_CHARS 17

/* A hash of a file's identity: device, inode, size, modification and
 * change times.  The change time too: a file rewritten in place whose
 * size and modification time were put back (touch -r) is another file,
 * and only the kernel sets it. */
static inline uint64_t cache_file_identity(const struct stat *st)
{
    uint64_t id[7] = { (uint64_t)st->st_dev, (uint64_t)st->st_ino,
                       (uint64_t)st->st_size, (uint64_t)st->st_mtim.tv_sec,
                       (uint64_t)st->st_mtim.tv_nsec,
                       (uint64_t)st->st_ctim.tv_sec,
                       (uint64_t)st->st_ctim.tv_nsec };
    return fnv1a64(FNV64_OFFSET, id, sizeof id);
}

/* Writes h as 16 hexadecimal digits at out. */
static inline void cache_hex16(uint64_t h, char *out)
{
    for (int i = 0; i < 16; i++)
        out[i] = "0123456789abcdef"[(h >> (60 - 4 * i)) & 15];
}

/* A copy's seal, KEY-NAME.seal beside it: the identity of the copy as it
 * was when the verifier passed it, as 16 hex digits and a NUL.  A copy
 * written to since (whatever was put back) has another. */
#define CACHE_SEAL_CHARS 17
static inline void cache_seal(const struct stat *copy, char out[CACHE_SEAL_CHARS])
{
    cache_hex16(cache_file_identity(copy), out);
    out[16] = '\0';
}

/* Whether text (a seal file's, up to its end of line) is copy's seal. */
static inline int cache_seal_is(const struct stat *copy, const char *text)
{
    char now[CACHE_SEAL_CHARS];
    cache_seal(copy, now);
    for (int i = 0; i < 16; i++)
        if (text[i] != now[i])
            return 0;
    return text[16] == '\0' || text[16] == '\n';
}

/* Writes the copy's file name for the original at path (whose stat is st)
 * into out: "<key>-<base name>".  Returns the length, or -1 when it does
 * not fit.  Calls nothing (not even libc's string functions): a traced
 * process's signal handler runs it. */
static inline int cache_entry_name(const char *path, const struct stat *st,
                                   const char *salt, char *out, size_t cap)
{
    uint64_t h = cache_file_identity(st);
    size_t salt_len = 0;
    while (salt[salt_len])
        salt_len++;
    h = fnv1a64(h, salt, salt_len);
    const char *base = path;
    for (const char *p = path; *p; p++)
        if (*p == '/')
            base = p + 1;
    cache_hex16(h, out);
    size_t n = 16;
    out[n++] = '-';
    for (; *base; base++) {
        if (n + 1 >= cap)
            return -1;
        out[n++] = *base;
    }
    out[n] = '\0';
    return (int)n;
}

/* The original's path of the copy at copy, as "<copy>.src" names it,
 * into out; 0, or -1 when there is no such file or it names no absolute
 * path. */
static inline int cache_read_original(const char *copy, char *out, size_t cap)
{
    char side[4096 + 8];
    size_t len = strlen(copy);
    if (len + 5 > sizeof side || cap < 2)
        return -1;
    memcpy(side, copy, len);
    memcpy(side + len, ".src", 5);
    int fd = open(side, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, out, cap - 1);
    close(fd);
    out[n > 0 ? n : 0] = '\0';
    out[strcspn(out, "\n")] = '\0';
    return out[0] == '/' ? 0 : -1;
}

#endif
