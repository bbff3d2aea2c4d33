/*
 * audit.c - libmemtap-audit.so, the static engine's loader audit module
 * (LD_AUDIT, set by memtap run): every library the program loads, at
 * start-up or by dlopen, by name or by path, comes from its rewritten copy
 * in memtap's cache.  A library that has no copy yet is rewritten on the
 * spot by `memtap cache add`, waited for; one the rewriter refuses (or
 * that could not be rewritten) loads as it is, and memtap run names it
 * after the run from the trace's module table.  A copy it finds is marked
 * used (its lock file's time, by which the cache is trimmed).  memtap's
 * own libraries and the loader are never redirected.
 *
 * At start-up it gives each copy libmemtap.so's memtap_start_early (the
 * copy's start stub, rt/abi.h), so that memtap starts before the first
 * library initializer instead of after them all.
 *
 * It also tells libmemtap.so whenever the loader's module list is
 * consistent again after a change (memtap_loader_changed): libmemtap's
 * dlopen wrapper sees the program's dlopen calls, not the loads the C
 * library makes itself (iconv's gconv modules, NSS), whose rewritten code
 * logged nothing until the runtime knew of it.
 *
 * It runs in the loader's audit namespace with a libc of its own: no
 * memory of the program's is touched, nothing is allocated.
 */
#define _GNU_SOURCE
#include "cache/key.h"
#include "rt/abi.h"
#include "sys/page.h"
#include "sys/env.h"
#include "sys/own_modules.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

static struct {
    int on;
    const char *dir;      /* MEMTAP_CACHE: the copies */
    const char *salt;     /* MEMTAP_CACHE_SALT: the settings' part of a key */
    const char *command;  /* MEMTAP_COMMAND: the memtap that fills it */
    char bypass[64];      /* "MEMTAP_BYPASS=...", "MEMTAP_TESTED=..." and
                             "MEMTAP_IMPLICIT=...": the rules copies are
                             made with */
    char tested[sizeof ENV_TESTED + ENV_TESTED_MAX];
    char implicit[32];
    char max[64];         /* "MEMTAP_CACHE_MAX=...": the cache's limit */
} cfg;

static char chosen[PATH_MAX]; /* the loader copies it before asking again */

EXPORT unsigned int la_version(unsigned int version)
{
    (void)version;
    cfg.dir = getenv(ENV_CACHE);
    cfg.salt = getenv(ENV_CACHE_SALT);
    cfg.command = getenv(ENV_COMMAND);
    cfg.on = cfg.dir && *cfg.dir && cfg.salt && cfg.command;
    const char *bypass = getenv(ENV_BYPASS), *tested = getenv(ENV_TESTED);
    snprintf(cfg.bypass, sizeof cfg.bypass, ENV_BYPASS "=%s", bypass ? bypass : "");
    snprintf(cfg.tested, sizeof cfg.tested, ENV_TESTED "=%s", tested ? tested : "");
    const char *implicit = getenv(ENV_IMPLICIT);
    snprintf(cfg.implicit, sizeof cfg.implicit, ENV_IMPLICIT "=%s",
             implicit ? implicit : "");
    const char *max = getenv(ENV_CACHE_MAX);
    snprintf(cfg.max, sizeof cfg.max, ENV_CACHE_MAX "=%s", max ? max : "");
    return LAV_CURRENT;
}

/* The copy's path for the original at path into chosen; 0, or -1. */
static int copy_path(const char *path, const struct stat *st)
{
    char name[NAME_MAX + 1];
    if (cache_entry_name(path, st, cfg.salt, name, sizeof name) < 0)
        return -1;
    int n = snprintf(chosen, sizeof chosen, "%s/%s", cfg.dir, name);
    return n < 0 || (size_t)n >= sizeof chosen ? -1 : 0;
}

/* Whether the copy at path is a readable file, not a symbolic link
 * (memtap run checked that the cache is the user's alone; this is the
 * second lock), and as the verifier passed it (its seal). */
static int usable_copy(const char *path)
{
    struct stat st;
    char side[PATH_MAX + 8], was[CACHE_SEAL_CHARS + 1];
    if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode) || access(path, R_OK) != 0)
        return 0;
    snprintf(side, sizeof side, "%s.seal", path);
    int fd = open(side, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, was, sizeof was - 1);
    close(fd);
    was[n > 0 ? n : 0] = '\0';
    return cache_seal_is(&st, was);
}

/* Notes that the copy at path is used now: its lock file's time, by
 * which the cache is trimmed (cache.h). */
static void touch_lock(const char *path)
{
    char lock[PATH_MAX + 8];
    snprintf(lock, sizeof lock, "%s.lock", path);
    utimensat(AT_FDCWD, lock, NULL, AT_SYMLINK_NOFOLLOW);
}

/* Runs `memtap cache add --dir DIR -q PATH` and waits for it. */
static void rewrite_now(const char *path)
{
    char *argv[] = { (char *)cfg.command, "cache", "add", "--dir",
                     (char *)cfg.dir, "-q", (char *)path, NULL };
    char *envp[] = { "PATH=/usr/bin:/bin", cfg.bypass, cfg.tested,
                     cfg.implicit, cfg.max, NULL };
    pid_t pid;
    if (posix_spawn(&pid, cfg.command, NULL, NULL, argv, envp) != 0)
        return;
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
}

/* A loaded module's dynamic pointer: glibc has made most of them absolute
 * by the time a module is open, not all (the vdso's). */
static uintptr_t dyn_ptr(const struct link_map *map, ElfW(Addr) p)
{
    return p < map->l_addr ? map->l_addr + p : p;
}

/* The path of the original of the copy at path, into out; 0, or -1 when
 * path is no copy in the cache. */
static int original_of(const char *path, char *out, size_t cap)
{
    size_t dl = strlen(cfg.dir);
    if (!path || strncmp(path, cfg.dir, dl) != 0 || path[dl] != '/' ||
        strchr(path + dl + 1, '/'))
        return -1;
    return cache_read_original(path, out, cap);
}

/* The directory of the original of the module `map` (the program when
 * its name is empty; a copy that goes by its original's name, or no copy,
 * is where its name says), into out; 0, or -1. */
static int original_dir(const struct link_map *map, char *out, size_t cap)
{
    char self[PATH_MAX];
    const char *path = map ? map->l_name : NULL;
    if (!path || !*path) {
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        if (n <= 0)
            return -1;
        self[n] = '\0';
        path = self;
    }
    if (original_of(path, out, cap) != 0 &&
        (path[0] != '/' || snprintf(out, cap, "%s", path) >= (int)cap))
        return -1;
    char *slash = strrchr(out, '/');
    if (slash == out)
        slash++;
    *slash = '\0';
    return 0;
}

/* The program's malloc (libmemtap.so's, which the loader's own names
 * come from after start-up: dlclose frees them). */
static void *(*program_malloc)(size_t);

/* A copy goes by its original's name (dladdr, dl_iterate_phdr, the
 * $ORIGIN of what it loads): libjvm found its runtime from its own path,
 * the cache (java: "Failed setting boot class path").  A name given at
 * start-up lives here (those modules stay), one given later comes from
 * the program's malloc, as the loader's own, which dlclose frees; a copy
 * keeps its name when there is no room. */
static void show_original_name(struct link_map *map, int started)
{
    static char names[1u << 18];
    static size_t used;
    char original[PATH_MAX];
    if (original_of(map->l_name, original, sizeof original) != 0)
        return;
    size_t n = strlen(original) + 1;
    char *name = NULL;
    if (!started && n <= sizeof names - used) {
        name = names + used;
        used += n;
    } else if (started && program_malloc) {
        name = program_malloc(n);
    }
    if (name) {
        memcpy(name, original, n);
        map->l_name = name;
    }
}

/* A copy runs from the cache, so the loader takes the cache for its
 * $ORIGIN, not where its original is: java's DT_RPATH $ORIGIN/../lib
 * holds libjli.so, libnio's $ORIGIN libnet.so, and their copies found
 * none.  The library `name` a module (asker) needs,
 * searched as the loader would in its DT_RPATH (and its DT_RUNPATH when
 * LD_LIBRARY_PATH, which would come first, is not set), $ORIGIN the
 * original's directory, into out; 0 when an entry with $ORIGIN holds
 * it, -1 when the loader is to search. */
static int origin_search(const struct link_map *asker, const char *name,
                         char *out, size_t cap)
{
    char dir[PATH_MAX];
    const char *strtab = NULL;
    uintptr_t rpath = 0, runpath = 0;
    int have_rpath = 0, have_runpath = 0;
    for (const ElfW(Dyn) *d = asker ? asker->l_ld : NULL; d && d->d_tag != DT_NULL; d++) {
        if (d->d_tag == DT_STRTAB)
            strtab = (const char *)dyn_ptr(asker, d->d_un.d_ptr);
        else if (d->d_tag == DT_RPATH)
            rpath = d->d_un.d_val, have_rpath = 1;
        else if (d->d_tag == DT_RUNPATH)
            runpath = d->d_un.d_val, have_runpath = 1;
    }
    const char *list = !strtab ? NULL
                       : have_runpath ? (getenv("LD_LIBRARY_PATH") ? NULL : strtab + runpath)
                       : have_rpath ? strtab + rpath : NULL;
    if (!list || !strstr(list, "ORIGIN") || original_dir(asker, dir, sizeof dir) != 0)
        return -1;
    for (const char *e = list; *e;) {
        size_t len = strcspn(e, ":");
        const char *rest = NULL;
        if (len >= 7 && strncmp(e, "$ORIGIN", 7) == 0)
            rest = e + 7;
        else if (len >= 9 && strncmp(e, "${ORIGIN}", 9) == 0)
            rest = e + 9;
        int n = rest ? snprintf(out, cap, "%s%.*s/%s", dir, (int)(len - (size_t)(rest - e)),
                                rest, name)
                     : snprintf(out, cap, "%.*s/%s", (int)len, e, name);
        if (n > 0 && (size_t)n < cap && access(out, R_OK) == 0)
            return rest ? 0 : -1; /* an earlier entry without $ORIGIN: the loader's */
        e += len + (e[len] == ':');
    }
    return -1;
}

EXPORT char *la_objsearch(const char *name, uintptr_t *cookie,
                          unsigned int flag)
{
    static char found[PATH_MAX]; /* (as chosen) */
    if (cfg.on && flag == LA_SER_ORIG && cookie && !strchr(name, '/') &&
        origin_search((const struct link_map *)*cookie, name, found,
                      sizeof found) == 0)
        name = found;
    const char *base = strrchr(name, '/');
    char real[PATH_MAX];
    struct stat st;
    if (!cfg.on || !base || own_module(base + 1) || !realpath(name, real) ||
        stat(real, &st) != 0 || !S_ISREG(st.st_mode))
        return (char *)name; /* a bare name (candidates follow), or not ours */
    if (copy_path(real, &st) != 0)
        return (char *)name;
    if (usable_copy(chosen)) {
        touch_lock(chosen);
        return chosen;
    }
    char refused[PATH_MAX + 16];
    snprintf(refused, sizeof refused, "%s.refused", chosen);
    if (access(refused, F_OK) == 0)
        return (char *)name;
    rewrite_now(real); /* a copy changed since is made again */
    return usable_copy(chosen) ? chosen : (char *)name;
}


/* The address of the function `name` a loaded module defines, by its GNU
 * hash table; NULL when it has none.  (dlsym from this namespace crashes
 * inside the loader's callbacks.) */
static void *module_function(const struct link_map *map, const char *name)
{
    const ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    const uint32_t *hash = NULL;
    for (const ElfW(Dyn) *d = map->l_ld; d && d->d_tag != DT_NULL; d++) {
        if (d->d_tag == DT_SYMTAB)
            symtab = (const ElfW(Sym) *)dyn_ptr(map, d->d_un.d_ptr);
        else if (d->d_tag == DT_STRTAB)
            strtab = (const char *)dyn_ptr(map, d->d_un.d_ptr);
        else if (d->d_tag == DT_GNU_HASH)
            hash = (const uint32_t *)dyn_ptr(map, d->d_un.d_ptr);
    }
    if (!symtab || !strtab || !hash || hash[0] == 0)
        return NULL;
    uint32_t h = 5381;
    for (const char *c = name; *c; c++)
        h = h * 33 + (uint8_t)*c;
    uint32_t nbuckets = hash[0], symoffset = hash[1], bloom_words = hash[2];
    const uint32_t *buckets =
        hash + 4 + bloom_words * (sizeof(ElfW(Addr)) / 4);
    const uint32_t *chain = buckets + nbuckets;
    for (uint32_t i = buckets[h % nbuckets]; i >= symoffset; i++) {
        const ElfW(Sym) *sym = &symtab[i];
        if ((chain[i - symoffset] | 1) == (h | 1) &&
            strcmp(strtab + sym->st_name, name) == 0 &&
            ELF64_ST_TYPE(sym->st_info) == STT_FUNC && sym->st_value)
            return (void *)(map->l_addr + sym->st_value);
        if (chain[i - symoffset] & 1)
            break;
    }
    return NULL;
}

/* libmemtap.so's memtap_loader_changed and memtap_start_early, once
 * libmemtap.so is open. */
static void (*loader_changed)(void);
static void *start_early;
static unsigned consistent_seen;

/* Gives a copy opened at start-up memtap's start (rt/abi.h): its DT_INIT
 * is the start stub, whose lea names the header, which names the slot
 * and the stub again (the loader names a copy by the original's path). */
static void give_start(const struct link_map *map)
{
    uintptr_t stub = 0;
    for (const ElfW(Dyn) *d = map->l_ld; d && d->d_tag != DT_NULL; d++)
        if (d->d_tag == DT_INIT)
            stub = dyn_ptr(map, d->d_un.d_ptr);
    if (!stub || memcmp((const void *)stub, MT_START_LEA, 3) != 0)
        return;
    int32_t rel;
    memcpy(&rel, (const void *)(stub + 3), 4);
    const mt_rewrite_header *h =
        (const mt_rewrite_header *)(stub + 7 + (intptr_t)rel);
    if (memcmp(h->magic, MT_REWRITE_MAGIC, sizeof h->magic) != 0 ||
        h->version != MT_REWRITE_VERSION ||
        (uintptr_t)h + h->start_stub != stub || h->start_slot < sizeof *h ||
        h->start_slot + 8 > h->segment_size)
        return;
    uintptr_t slot = (uintptr_t)h + h->start_slot;
    uintptr_t page = slot & ~(uintptr_t)(PAGE - 1);
    if (mprotect((void *)page, PAGE, PROT_READ | PROT_WRITE) != 0)
        return;
    memcpy((void *)slot, &start_early, sizeof start_early);
    mprotect((void *)page, PAGE, PROT_READ | PROT_EXEC);
}

EXPORT unsigned int la_objopen(struct link_map *map, Lmid_t lmid,
                               uintptr_t *cookie)
{
    (void)cookie;
    const char *base = map->l_name ? strrchr(map->l_name, '/') : NULL;
    if (lmid != LM_ID_BASE || !base)
        return 0;
    if (!loader_changed && strcmp(base + 1, "libmemtap.so") == 0) {
        loader_changed = (void (*)(void))module_function(
            map, "memtap_loader_changed");
        start_early = module_function(map, "memtap_start_early");
        program_malloc = (void *(*)(size_t))module_function(map, "malloc");
    } else if (cfg.on) {
        if (start_early && !consistent_seen)
            give_start(map); /* later ones find memtap started */
        show_original_name(map, consistent_seen != 0);
    }
    return 0; /* no symbol binding to audit */
}

EXPORT void la_activity(uintptr_t *cookie, unsigned int flag)
{
    (void)cookie;
    /* the first consistent list is start-up's, before libmemtap.so is
     * relocated: it looks at the modules itself when it starts */
    if (flag == LA_ACT_CONSISTENT && consistent_seen++ > 0 && loader_changed)
        loader_changed();
}
