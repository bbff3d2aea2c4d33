/*
 * cache/cache.h - memtap's cache of rewritten copies (the static engine's
 * programs and libraries): where it is, getting a file's copy (rewriting
 * it on first use, once even when several runs ask at the same time),
 * listing, trimming and clearing it.
 */
#ifndef MEMTAP_CACHE_CACHE_H
#define MEMTAP_CACHE_CACHE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sys/env.h"

/* The rules copies are rewritten with; part of every key. */
typedef struct cache_rules {
    unsigned bypass;      /* the bypass rules (enum select_bypass) */
    int implicit;         /* copies log push/pop/call/ret's stack slots */
    char tested[ENV_TESTED_MAX]; /* code whose loads are not instrumented
                             (module base names and PATH@LO-HI ranges,
                             comma-separated) */
} cache_rules;

/* The rules in the environment ($MEMTAP_BYPASS, $MEMTAP_IMPLICIT,
 * $MEMTAP_TESTED), as `memtap run` passes them on to its traced process,
 * whose loader audit module runs `memtap cache add`; none when unset. */
void cache_rules_from_env(cache_rules *r);
/* Puts the rules into the environment, for the traced process. */
void cache_rules_to_env(const cache_rules *r);

typedef struct cache {
    char dir[PATH_MAX];   /* the copies */
    char salt[160];       /* what the keys take from memtap and its rules */
    cache_rules rules;
    uint64_t max_bytes;   /* what its files may take (0: no limit) */
} cache;

/* The size the cache is trimmed to after a copy is made, unless
 * $MEMTAP_CACHE_MAX says otherwise: a copy of libc takes about 100 MiB,
 * and each memtap build and each changed file gets copies of its own. */
#define CACHE_MAX_DEFAULT (10ull << 30)
/* A copy used (found or made) this recently is never trimmed: a run may
 * be about to load it. */
#define CACHE_IN_USE_SECONDS 3600

/* Opens the cache: dir if given, else $MEMTAP_CACHE_DIR, else
 * $XDG_CACHE_HOME/memtap, else ~/.cache/memtap (created as needed), for
 * copies made with rules (NULL: none, enough to list or clear it), its
 * limit $MEMTAP_CACHE_MAX (bytes, or with K, M or G; 0: none).  Returns
 * 0, or -1 with the reason in err. */
int cache_open(cache *c, const char *dir, const cache_rules *rules, char *err,
               size_t errcap);

typedef enum cache_result {
    CACHE_HIT,       /* the copy was there */
    CACHE_BUILT,     /* rewritten now */
    CACHE_REBUILT,   /* the copy there was damaged: rewritten now */
    CACHE_REFUSED,   /* the rewriter refuses the file (now or before): why */
    CACHE_ERROR      /* the cache cannot be used: why */
} cache_result;

/* The rewritten copy of the file at path, in copy.  why gets the reason
 * for CACHE_REFUSED and CACHE_ERROR. */
cache_result cache_get(const cache *c, const char *path, char *copy,
                       size_t copycap, char *why, size_t whycap);

/* The copy of path the cache holds, in copy, without making one: 0, or -1
 * when there is none. */
int cache_find(const cache *c, const char *path, char *copy, size_t copycap);

/* Prints one line per copy (size, original) to out; returns how many,
 * and in *bytes what they take on disk. */
size_t cache_list(const cache *c, FILE *out, uint64_t *bytes);

/* Removes every copy and what belongs to it; returns how many files, or
 * -1 with errno set. */
long cache_clear(const cache *c);

/* The length of the name of the entry (a copy's file name) that a file
 * of the cache belongs to: the name less a side file's suffix or a
 * temporary's ".tmpPID"; 0 when the file is none of memtap's. */
size_t cache_entry_base(const char *name);

/* What cache_trim did: the copies it removed and the bytes they took,
 * and the bytes the cache's files take after. */
typedef struct cache_trim_result {
    size_t removed;
    uint64_t freed, left;
} cache_trim_result;

/* Removes the copies used longest ago, with what belongs to each, until
 * the cache's files take at most max bytes; none used within
 * CACHE_IN_USE_SECONDS, none another run holds.  0, or -1 with errno set
 * when the directory cannot be read. */
int cache_trim(const cache *c, uint64_t max, cache_trim_result *out);

#endif
