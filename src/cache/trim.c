/*
 * trim.c - keeping the cache of rewritten copies to its limit: its files
 * grouped by entry (a copy and its side files), each entry's last use
 * (its lock file's time, which cache_get and the loader audit module
 * touch), and the removal of those used longest ago.
 */
#define _GNU_SOURCE
#include "cache/cache.h"
#include "cache/key.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

size_t cache_entry_base(const char *name)
{
    static const char *const sides[] = { ".src", ".refused", ".lock", ".libs",
                                         ".seal" };
    size_t len = strlen(name);
    if (len <= CACHE_KEY_CHARS || name[CACHE_KEY_CHARS - 1] != '-' ||
        strspn(name, "0123456789abcdef") != CACHE_KEY_CHARS - 1)
        return 0;
    for (size_t i = 0; i < sizeof sides / sizeof *sides; i++) {
        size_t n = strlen(sides[i]);
        if (len > n && strcmp(name + len - n, sides[i]) == 0)
            return len - n;
    }
    const char *tmp = strstr(name, ".tmp");
    if (tmp && tmp[4] && strspn(tmp + 4, "0123456789") == strlen(tmp + 4))
        return (size_t)(tmp - name);
    return len;
}

/* A file of the cache, in cache_trim: its name's first `base` bytes name
 * its entry (the copy's name), its bytes on disk, when it was last
 * written, and whether it is the entry's lock file (whose time is when
 * the copy was last used: cache_get and the audit module touch it). */
typedef struct trim_file {
    char *name;
    size_t base;
    uint64_t bytes;
    time_t written;
    int lock;
} trim_file;

/* An entry of the cache: its files files[first..first + n), when it was
 * last used (its lock's time, else its newest file's). */
typedef struct trim_entry {
    size_t first, n;
    uint64_t bytes;
    time_t used;
    int has_lock;
} trim_entry;

static int by_entry(const void *a, const void *b)
{
    const trim_file *x = a, *y = b;
    size_t n = x->base < y->base ? x->base : y->base;
    int c = memcmp(x->name, y->name, n);
    return c ? c : (x->base > y->base) - (x->base < y->base);
}

static int by_use(const void *a, const void *b)
{
    const trim_entry *x = a, *y = b;
    return (x->used > y->used) - (x->used < y->used);
}

/* The cache's files, sorted by entry, into *out (the caller frees each
 * name and the array); how many, or -1 with errno set. */
static long trim_files(const cache *c, trim_file **out)
{
    DIR *d = opendir(c->dir);
    if (!d)
        return -1;
    size_t n = 0, cap = 0;
    trim_file *f = NULL;
    struct dirent *e;
    struct stat st;
    while ((e = readdir(d)) != NULL) {
        size_t base = cache_entry_base(e->d_name);
        if (!base || fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (n == cap) {
            trim_file *more = realloc(f, (cap = cap ? 2 * cap : 256) * sizeof *f);
            if (!more)
                break;
            f = more;
        }
        char *name = strdup(e->d_name);
        if (!name)
            break;
        f[n++] = (trim_file){ name, base, (uint64_t)st.st_blocks * 512,
                              st.st_mtime, strcmp(name + base, ".lock") == 0 };
    }
    closedir(d);
    qsort(f, n, sizeof *f, by_entry);
    *out = f;
    return (long)n;
}

/* Removes an entry's files, unless another run holds its lock; whether
 * it did. */
static int remove_entry(const cache *c, const trim_file *f, size_t n)
{
    char lock[PATH_MAX + NAME_MAX + 8];
    snprintf(lock, sizeof lock, "%s/%.*s.lock", c->dir, (int)f->base, f->name);
    int fd = open(lock, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) != 0) {
        close(fd);
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        char path[PATH_MAX + NAME_MAX + 2];
        snprintf(path, sizeof path, "%s/%s", c->dir, f[i].name);
        unlink(path); /* the lock among them, held until closed */
    }
    if (fd >= 0)
        close(fd);
    return 1;
}

int cache_trim(const cache *c, uint64_t max, cache_trim_result *out)
{
    memset(out, 0, sizeof *out);
    trim_file *f = NULL;
    long nf = trim_files(c, &f);
    if (nf < 0)
        return errno == ENOENT ? 0 : -1;
    trim_entry *e = malloc(((size_t)nf + 1) * sizeof *e);
    size_t ne = 0;
    for (size_t i = 0; e && i < (size_t)nf; i++) {
        if (!ne || by_entry(&f[e[ne - 1].first], &f[i]) != 0)
            e[ne++] = (trim_entry){ i, 0, 0, 0, 0 };
        trim_entry *t = &e[ne - 1];
        t->n++;
        t->bytes += f[i].bytes;
        if (f[i].lock || (!t->has_lock && f[i].written > t->used))
            t->used = f[i].written;
        t->has_lock |= f[i].lock;
        out->left += f[i].bytes;
    }
    if (e)
        qsort(e, ne, sizeof *e, by_use);
    time_t recent = time(NULL) - CACHE_IN_USE_SECONDS;
    for (size_t i = 0; e && i < ne && out->left > max; i++) {
        if (e[i].used >= recent || !remove_entry(c, &f[e[i].first], e[i].n))
            continue;
        out->removed++;
        out->freed += e[i].bytes;
        out->left -= e[i].bytes;
    }
    for (long i = 0; i < nf; i++)
        free(f[i].name);
    free(f);
    free(e);
    return 0;
}
