/*
 * cache.c - the cache of rewritten copies.  A copy's name is its key
 * (cache/key.h: the original's identity and the salt) followed by the
 * original's base name; beside it, KEY-NAME.src names the original, and
 * KEY-NAME.refused holds the reason when the rewriter refused the file, so
 * that it is not tried at every run.  A copy is written under a temporary
 * name and renamed into place while its lock file (KEY-NAME.lock, flock)
 * is held, so concurrent runs build it once and never see half a file.
 * KEY-NAME.seal holds the copy's identity once verified and in place
 * (cache/key.h): a copy written to since is rebuilt, not run.
 * The salt holds memtap's build-id: a new memtap never uses an older
 * one's copies.  Each use of a copy touches its lock file, and making one
 * trims the cache to its limit (trim.c).
 */
#define _GNU_SOURCE
#include "cache/cache.h"
#include "sys/env.h"
#include "sys/hash.h"
#include "sys/size.h"

#include "cache/key.h"
#include "rewrite/rewrite.h"
#include "rewrite/verify.h"
#include "rt/abi.h"
#include "sys/build_id.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* The --tested list (MEMTAP_TESTED) as it applies to the file at path:
 * BYPASS_LOADS for all of it when an item is its base name (or its base
 * name up to a '.' after the item: libfoo names libfoo.so.1), or for the
 * ranges of the items "PATH@LO-HI" that name it. */
static void apply_tested(const char *list, const char *path,
                         select_params *p)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t path_len = strlen(path);
    int whole = 0;
    while (*list) {
        size_t len = strcspn(list, ",");
        const char *at = memchr(list, '@', len);
        if (!at) {
            whole |= len && strncmp(base, list, len) == 0 &&
                     (base[len] == '\0' || base[len] == '.');
        } else if ((size_t)(at - list) == path_len &&
                   strncmp(list, path, path_len) == 0 &&
                   p->ntested < SELECT_IGNORE_MAX) {
            char *end;
            select_range r;
            r.lo = strtoull(at + 1, &end, 16);
            r.hi = *end == '-' ? strtoull(end + 1, &end, 16) : 0;
            if (r.hi > r.lo)
                p->tested[p->ntested++] = r;
        }
        list += len + (list[len] == ',');
    }
    if (whole)
        p->ntested = 0;
    if (whole || p->ntested)
        p->bypass |= BYPASS_LOADS;
}

/* The settings a copy of the file at path is rewritten with:
 * non-selective (every memory operand), elision on, the bypass rules. */
static void copy_options(const cache *c, const char *path, rewrite_options *o)
{
    memset(o, 0, sizeof *o);
    select_params_default(&o->params);
    o->params.nonselective = 1;
    o->params.bypass = c->rules.bypass;
    o->params.implicit = c->rules.implicit;
    apply_tested(c->rules.tested, path, &o->params);
}

static int mkdirs(char *path)
{
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        int rc = mkdir(path, 0755);
        *p = '/';
        if (rc != 0 && errno != EEXIST)
            return -1;
    }
    return mkdir(path, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

/* The GNU build-id of the running memtap, in hex ("" when it has none):
 * the first object dl_iterate_phdr names is the executable. */
static int own_build_id(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    uint8_t id[32];
    size_t n = loaded_build_id(info, id);
    char *out = data;
    for (size_t k = 0; k < n; k++)
        sprintf(out + 2 * k, "%02x", id[k]);
    return 1;
}

/* Whether dir is the calling user's alone: a directory it owns that no one
 * else may write.  Its copies run as the user (as root under sudo), so
 * one another user could plant or replace (a symbolic link to a file to
 * overwrite, a library of theirs under a key) is refused. */
static int private_dir(const char *dir, char *err, size_t errcap)
{
    struct stat st;
    if (stat(dir, &st) != 0)
        return snprintf(err, errcap, "%s: %s", dir, strerror(errno)), -1;
    const char *why = !S_ISDIR(st.st_mode) ? "is not a directory"
                      : st.st_uid != geteuid() ? "is not owned by you"
                      : (st.st_mode & (S_IWGRP | S_IWOTH)) ? "is writable by others"
                                                            : NULL;
    if (!why)
        return 0;
    snprintf(err, errcap, "%s %s (owner uid %u, mode %03o): copies there could "
                          "be anyone's; set MEMTAP_CACHE_DIR to a directory of "
                          "your own", dir, why, (unsigned)st.st_uid,
             (unsigned)(st.st_mode & 0777));
    return -1;
}

void cache_rules_from_env(cache_rules *r)
{
    const char *bypass = getenv(ENV_BYPASS), *tested = getenv(ENV_TESTED);
    const char *implicit = getenv(ENV_IMPLICIT);
    r->bypass = bypass ? (unsigned)strtoul(bypass, NULL, 0) : 0;
    r->implicit = implicit && strcmp(implicit, "1") == 0;
    snprintf(r->tested, sizeof r->tested, "%s", tested ? tested : "");
}

void cache_rules_to_env(const cache_rules *r)
{
    char hex[16];
    snprintf(hex, sizeof hex, "0x%x", r->bypass);
    setenv(ENV_BYPASS, hex, 1);
    if (r->implicit)
        setenv(ENV_IMPLICIT, "1", 1);
    else
        unsetenv(ENV_IMPLICIT);
    if (r->tested[0])
        setenv(ENV_TESTED, r->tested, 1);
    else
        unsetenv(ENV_TESTED);
}

/* $MEMTAP_CACHE_MAX into *max (a size, sys/size.h); 0, or -1. */
static int max_from_env(uint64_t *max)
{
    const char *s = getenv(ENV_CACHE_MAX);
    *max = CACHE_MAX_DEFAULT;
    return s && *s ? size_parse(s, max) : 0;
}

int cache_open(cache *c, const char *dir, const cache_rules *rules, char *err,
               size_t errcap)
{
    if (max_from_env(&c->max_bytes) != 0)
        return snprintf(err, errcap, ENV_CACHE_MAX ": expected a size (bytes, "
                                     "or with K, M or G)"), -1;
    const char *env = getenv(ENV_CACHE_DIR);
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int n;
    if (dir && *dir)
        n = snprintf(c->dir, sizeof c->dir, "%s", dir);
    else if (env && *env)
        n = snprintf(c->dir, sizeof c->dir, "%s", env);
    else if (xdg && *xdg == '/')
        n = snprintf(c->dir, sizeof c->dir, "%s/memtap", xdg);
    else if (home && *home)
        n = snprintf(c->dir, sizeof c->dir, "%s/.cache/memtap", home);
    else
        return snprintf(err, errcap, "no cache directory (set "
                                     "MEMTAP_CACHE_DIR or HOME)"), -1;
    if (n < 0 || (size_t)n >= sizeof c->dir)
        return snprintf(err, errcap, "cache directory path too long"), -1;
    if (mkdirs(c->dir) != 0)
        return snprintf(err, errcap, "%s: %s", c->dir, strerror(errno)), -1;
    if (private_dir(c->dir, err, errcap) != 0)
        return -1;
    char id[65] = "";
    dl_iterate_phdr(own_build_id, id);
    memset(&c->rules, 0, sizeof c->rules);
    if (rules)
        c->rules = *rules;
    snprintf(c->salt, sizeof c->salt,
             "abi%u-%s-nonselective-b%x%s-t%016llx", MT_REWRITE_VERSION, id,
             c->rules.bypass, c->rules.implicit ? "-implicit" : "",
             (unsigned long long)fnv1a64_str(FNV64_OFFSET, c->rules.tested));
    return 0;
}

/* dir/name + suffix into out; 0, or -1 when it does not fit. */
static int entry_path(const cache *c, const char *name, const char *suffix,
                      char *out, size_t cap)
{
    int n = snprintf(out, cap, "%s/%s%s", c->dir, name, suffix);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

/* fopen of a file in the cache, never through a symbolic link: one to
 * write is made anew. */
static FILE *open_entry(const char *path, int write)
{
    if (write)
        unlink(path);
    int fd = open(path, write ? O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
                                    O_CLOEXEC
                              : O_RDONLY | O_NOFOLLOW | O_CLOEXEC, 0644);
    FILE *f = fd >= 0 ? fdopen(fd, write ? "w" : "r") : NULL;
    if (!f && fd >= 0)
        close(fd);
    return f;
}

/* Reads a small text file into buf (trailing newline dropped). */
static void read_text(const char *path, char *buf, size_t cap)
{
    buf[0] = '\0';
    FILE *f = open_entry(path, 0);
    if (!f)
        return;
    if (fgets(buf, (int)cap, f))
        buf[strcspn(buf, "\n")] = '\0';
    fclose(f);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = open_entry(path, 1);
    if (f) {
        fprintf(f, "%s\n", text);
        fclose(f);
    }
}

/* Checks the copy at tmp of real before anything runs it (rewrite/
 * verify.h): 0, or -1 with why (the module is then left to the fault
 * engine, as any the rewriter refuses). */
static int verified(const char *real, const char *tmp, char *why,
                    size_t whycap)
{
    verify_report v;
    if (rewrite_verify(real, tmp, &v, why, whycap) != 0)
        return -1;
    if (!v.violations)
        return 0;
    snprintf(why, whycap, "memtap's verifier found %" PRIu64 " fault%s in "
             "the rewritten copy (%s); please report it", v.violations,
             v.violations == 1 ? "" : "s", v.shown[0]);
    return -1;
}

/* Rewrites real into the entry; the caller holds its lock. */
static cache_result build(const cache *c, const char *real, const char *copy,
                          const char *name, char *why, size_t whycap)
{
    char tmp[PATH_MAX + 32], side[PATH_MAX + 16];
    snprintf(tmp, sizeof tmp, "%s.tmp%ld", copy, (long)getpid());
    rewrite_options o;
    copy_options(c, real, &o);
    rewrite_report rep;
    errno = 0;
    if (rewrite_file(real, tmp, &o, &rep, why, whycap) != 0 ||
        rewrite_too_slow(&rep, why, whycap) || verified(real, tmp, why, whycap) != 0) {
        int e = errno;
        unlink(tmp);
        /* a full disk or a failed write is this run's trouble, not the
         * file's: not remembered */
        int transient = e == ENOSPC || e == EDQUOT || e == EIO || e == EROFS ||
                        e == ENOMEM || e == EMFILE || e == ENFILE;
        if (!transient && entry_path(c, name, ".refused", side, sizeof side) == 0)
            write_text(side, why);
        return CACHE_REFUSED;
    }
    /* the original's name first: whoever finds the copy finds it too */
    if (entry_path(c, name, ".src", side, sizeof side) == 0)
        write_text(side, real);
    if (rename(tmp, copy) != 0) {
        snprintf(why, whycap, "%s: %s", copy, strerror(errno));
        unlink(tmp);
        return CACHE_ERROR;
    }
    /* after the rename, which sets the copy's change time */
    struct stat st;
    char seal[CACHE_SEAL_CHARS];
    if (lstat(copy, &st) == 0 &&
        entry_path(c, name, ".seal", side, sizeof side) == 0) {
        cache_seal(&st, seal);
        write_text(side, seal);
    }
    return CACHE_BUILT;
}

/* Whether the copy (whose lstat is st) is as the verifier passed it. */
static int sealed(const cache *c, const char *name, const struct stat *st)
{
    char side[PATH_MAX + 16], was[CACHE_SEAL_CHARS + 1];
    if (entry_path(c, name, ".seal", side, sizeof side) != 0)
        return 0;
    read_text(side, was, sizeof was);
    return cache_seal_is(st, was);
}

/* Under the entry's lock: the copy as it is, or built. */
static cache_result get_locked(const cache *c, const char *real,
                               const char *name, char *copy, char *why,
                               size_t whycap)
{
    char side[PATH_MAX + 16];
    struct stat st;
    if (entry_path(c, name, ".refused", side, sizeof side) == 0 &&
        lstat(side, &st) == 0 && S_ISREG(st.st_mode)) {
        read_text(side, why, whycap);
        return CACHE_REFUSED;
    }
    if (lstat(copy, &st) == 0) {
        if (S_ISREG(st.st_mode) && sealed(c, name, &st) &&
            rewrite_is_copy_of(real, copy) == 1)
            return CACHE_HIT;
        /* damaged (not one memtap wrote whole), written to since it was
         * verified, another file's, or not a file */
        unlink(copy);
        cache_result r = build(c, real, copy, name, why, whycap);
        return r == CACHE_BUILT ? CACHE_REBUILT : r;
    }
    return build(c, real, copy, name, why, whycap);
}

int cache_find(const cache *c, const char *path, char *copy, size_t copycap)
{
    char real[PATH_MAX], name[NAME_MAX + 1];
    struct stat st;
    struct mt_rewrite_header h;
    if (!realpath(path, real) || stat(real, &st) != 0 ||
        cache_entry_name(real, &st, c->salt, name, sizeof name) < 0 ||
        entry_path(c, name, "", copy, copycap) != 0)
        return -1;
    return rewrite_read_header(copy, &h);
}

cache_result cache_get(const cache *c, const char *path, char *copy,
                       size_t copycap, char *why, size_t whycap)
{
    char real[PATH_MAX], name[NAME_MAX + 1], lock[PATH_MAX + 16];
    struct stat st;
    if (!realpath(path, real) || stat(real, &st) != 0)
        return snprintf(why, whycap, "%s", strerror(errno)), CACHE_REFUSED;
    if (cache_entry_name(real, &st, c->salt, name, sizeof name) < 0 ||
        entry_path(c, name, "", copy, copycap) != 0 ||
        entry_path(c, name, ".lock", lock, sizeof lock) != 0)
        return snprintf(why, whycap, "path too long"), CACHE_ERROR;
    int fd = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 || flock(fd, LOCK_EX) != 0) {
        snprintf(why, whycap, "%s: %s", lock, strerror(errno));
        if (fd >= 0)
            close(fd);
        return CACHE_ERROR;
    }
    cache_result r = get_locked(c, real, name, copy, why, whycap);
    if (r != CACHE_ERROR)
        futimens(fd, NULL); /* used now (cache_trim) */
    close(fd);
    if ((r == CACHE_BUILT || r == CACHE_REBUILT) && c->max_bytes) {
        cache_trim_result t;
        cache_trim(c, c->max_bytes, &t);
    }
    return r;
}

/* Whether a directory entry is a copy (not a side file or a temporary). */
static int is_copy(const char *name)
{
    size_t base = cache_entry_base(name);
    return base && base == strlen(name) && !strstr(name, ".tmp");
}

size_t cache_list(const cache *c, FILE *out, uint64_t *bytes)
{
    *bytes = 0;
    DIR *d = opendir(c->dir);
    if (!d)
        return 0;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        int copy = is_copy(e->d_name);
        size_t len = strlen(e->d_name);
        int refused = len > 8 && strcmp(e->d_name + len - 8, ".refused") == 0;
        if (!copy && !refused)
            continue;
        char path[PATH_MAX + NAME_MAX + 2], src[PATH_MAX], why[512];
        snprintf(path, sizeof path, "%s/%s", c->dir, e->d_name);
        if (refused) {
            read_text(path, why, sizeof why);
            fprintf(out, "refused  %s: %s\n", e->d_name, why);
            continue;
        }
        struct stat st;
        char side[PATH_MAX + NAME_MAX + 8];
        snprintf(side, sizeof side, "%s.src", path);
        read_text(side, src, sizeof src);
        if (stat(path, &st) == 0) {
            fprintf(out, "%9lld  %s  <- %s\n", (long long)st.st_size, path,
                    *src ? src : "?");
            *bytes += (uint64_t)st.st_blocks * 512;
        }
        n++;
    }
    closedir(d);
    return n;
}

long cache_clear(const cache *c)
{
    DIR *d = opendir(c->dir);
    if (!d)
        return errno == ENOENT ? 0 : -1;
    long n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strlen(e->d_name) <= CACHE_KEY_CHARS ||
            e->d_name[CACHE_KEY_CHARS - 1] != '-')
            continue; /* only what memtap put there */
        if (unlinkat(dirfd(d), e->d_name, 0) == 0)
            n++;
    }
    closedir(d);
    return n;
}
