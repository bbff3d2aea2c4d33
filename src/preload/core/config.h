/*
 * config.h - the MEMTAP_* environment (sys/env.h) as libmemtap.so runs
 * by it: read once, at start-up, into one struct, its strings copied (the
 * program may change its environment afterwards) and its switches
 * parsed.  What the command sets is cli/run_env.c's.
 */
#ifndef MEMTAP_PRELOAD_CONFIG_H
#define MEMTAP_PRELOAD_CONFIG_H

#include <stdint.h>

#include "sys/env.h"

/* MEMTAP_WINDOW: when accesses are recorded. */
typedef enum config_window {
    WINDOW_ALL,          /* from the start (unset, or "all") */
    WINDOW_MAIN,         /* from main on */
    WINDOW_MARKS,        /* between memtap_start and memtap_stop */
} config_window;

#define CONFIG_PATH_MAX 4096

typedef struct preload_config {
    /* the run; a string is "" when its variable is unset or too long */
    char output[CONFIG_PATH_MAX];
    int status_fd;               /* -1 when unset */
    int accesses;                /* MEMTAP_ACCESSES=1 */
    config_window window;
    char compress[16];           /* balanced, fast, small */
    char writer[16];             /* off, mix, all */
    uint32_t buffer_records;     /* 0 when unset */
    char consumer[CONFIG_PATH_MAX];
    char tool[16];               /* heat, share, uninit */
    int64_t tool_chunk;          /* -1 when unset */
    int check_once;              /* MEMTAP_TOOL_CHECK_ONCE=1 */
    /* what is recorded; a list is NULL when unset */
    const char *only;
    const char *ignore, *watch, *watch_sites;
    /* the static engine's cache, for programs started by exec */
    char cache[CONFIG_PATH_MAX];
    char cache_salt[256];
    char command[CONFIG_PATH_MAX];
    const char *bypass, *tested;
    /* measurement switches */
    int rewrite_discard;         /* MEMTAP_REWRITE_DISCARD=1... */
    int debug_traps;             /* MEMTAP_DEBUG_TRAPS set */
    int string_elements;         /* MEMTAP_STRING_ELEMENTS=1 */
    int fault_step;              /* MEMTAP_FAULT_PATH=step */
    int fault_complete_only;     /* MEMTAP_FAULT_PATH=complete (or step) */
    int fault_hot;               /* MEMTAP_FAULT_PATH=hot */
} preload_config;

/* The configuration, read on the first call (the library's start-up,
 * before any other thread). */
const preload_config *config(void);

#endif
