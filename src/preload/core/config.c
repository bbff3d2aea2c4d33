/*
 * config.c - the MEMTAP_* environment read once (config.h).  No malloc:
 * the strings are copied into this file's static storage.
 */
#define _GNU_SOURCE
#include "config.h"

#include <stdlib.h>
#include <string.h>

#define LIST_MAX ENV_TESTED_MAX

static preload_config cfg;
static char lists[6][LIST_MAX];  /* only, ignore, watch, watch_sites,
                                    bypass, tested */
static int loaded;

/* name's value copied into buf ("" when unset or too long). */
static void copy(char *buf, size_t cap, const char *name)
{
    const char *v = getenv(name);
    size_t n = v ? strlen(v) : 0;
    if (n >= cap)
        n = 0;
    memcpy(buf, v ? v : "", n);
    buf[n] = '\0';
}

/* name's value kept in list slot k, or NULL when unset or too long. */
static const char *list(int k, const char *name)
{
    const char *v = getenv(name);
    if (!v || strlen(v) >= LIST_MAX)
        return NULL;
    strcpy(lists[k], v);
    return lists[k];
}

/* Whether name is set to "1" (its first character: MEMTAP_REWRITE_DISCARD
 * takes "1" with anything after). */
static int switched_on(const char *name, int whole)
{
    const char *v = getenv(name);
    return v && v[0] == '1' && (!whole || v[1] == '\0');
}

/* A decimal number in [lo, hi], else 0. */
static uint32_t number(const char *name, long lo, long hi)
{
    const char *v = getenv(name);
    long n = v && *v ? strtol(v, NULL, 10) : 0;
    return n >= lo && n <= hi ? (uint32_t)n : 0;
}

static void load(void)
{
    copy(cfg.output, sizeof cfg.output, ENV_OUTPUT);
    const char *fd = getenv(ENV_STATUS_FD);
    cfg.status_fd = fd && *fd ? atoi(fd) : -1;
    cfg.accesses = switched_on(ENV_ACCESSES, 1);
    const char *w = getenv(ENV_WINDOW);
    cfg.window = w && strcmp(w, "main") == 0    ? WINDOW_MAIN
                 : w && strcmp(w, "marks") == 0 ? WINDOW_MARKS
                                                : WINDOW_ALL;
    copy(cfg.compress, sizeof cfg.compress, ENV_COMPRESS);
    copy(cfg.writer, sizeof cfg.writer, ENV_WRITER);
    cfg.buffer_records = number(ENV_BUFFER_RECORDS, 64, 1 << 20);
    copy(cfg.consumer, sizeof cfg.consumer, ENV_CONSUMER);
    copy(cfg.tool, sizeof cfg.tool, ENV_TOOL);
    const char *chunk = getenv(ENV_TOOL_CHUNK);
    cfg.tool_chunk = chunk && *chunk ? (int64_t)strtoul(chunk, NULL, 10) : -1;
    cfg.check_once = switched_on(ENV_TOOL_CHECK_ONCE, 1);
    cfg.only = list(0, ENV_ONLY);
    cfg.ignore = list(1, ENV_IGNORE);
    cfg.watch = list(2, ENV_WATCH);
    cfg.watch_sites = list(3, ENV_WATCH_SITES);
    copy(cfg.cache, sizeof cfg.cache, ENV_CACHE);
    copy(cfg.cache_salt, sizeof cfg.cache_salt, ENV_CACHE_SALT);
    copy(cfg.command, sizeof cfg.command, ENV_COMMAND);
    cfg.bypass = list(4, ENV_BYPASS);
    cfg.tested = list(5, ENV_TESTED);
    cfg.rewrite_discard = switched_on(ENV_REWRITE_DISCARD, 0);
    cfg.debug_traps = getenv(ENV_DEBUG_TRAPS) != NULL;
    cfg.string_elements = switched_on(ENV_STRING_ELEMENTS, 1);
    const char *path = getenv(ENV_FAULT_PATH);
    cfg.fault_step = path && strcmp(path, "step") == 0;
    cfg.fault_complete_only =
        cfg.fault_step || (path && strcmp(path, "complete") == 0);
    cfg.fault_hot = path && strcmp(path, "hot") == 0;
}

const preload_config *config(void)
{
    if (!loaded) {
        load();
        loaded = 1;
    }
    return &cfg;
}
