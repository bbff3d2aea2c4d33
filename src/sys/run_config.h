/*
 * sys/run_config.h - the settings `memtap run` hands the code it puts into
 * the traced process, one row each: how the value reads, the field of
 * run_config that holds it, the MEMTAP_* variable that carries it
 * (sys/env.h) and the row's arguments.  The struct comes from the rows,
 * and so does libmemtap.so's decoding of the environment
 * (preload/core/config.c, without the C library), and the command's
 * encoding of a row into its variable (cli/run_env.c).
 *
 * Kinds: TEXT (a string of at most a-1 bytes; "" when unset or longer),
 * LIST (a comma-separated list kept as it is; NULL when unset or longer
 * than RUN_CONFIG_LIST_MAX - 1), FLAG ("1": 1, else 0), LEAD1 (1 when the
 * value starts with '1'), SET (1 when the variable is set at all), NUM (a
 * decimal number in [a, b], else 0), FD (a decimal number; -1 when unset),
 * SIZE (a decimal number; -1 when unset), WORDS (the index of the value
 * among the '|'-separated words a; 0 when unset or none of them).
 */
#ifndef MEMTAP_SYS_RUN_CONFIG_H
#define MEMTAP_SYS_RUN_CONFIG_H

#include <stdint.h>

#include "sys/env.h"

#define RUN_CONFIG_PATH_MAX 4096
#define RUN_CONFIG_LIST_MAX ENV_TESTED_MAX

/* MEMTAP_WINDOW: when accesses are recorded. */
enum { WINDOW_ALL, WINDOW_MAIN, WINDOW_MARKS };
/* MEMTAP_FAULT_PATH: the fault engine's way with an access. */
enum { FAULT_PATH_DEFAULT, FAULT_PATH_STEP, FAULT_PATH_COMPLETE, FAULT_PATH_HOT };

#define RUN_CONFIG_ROWS(X)                                                   \
    /* the run */                                                            \
    X(TEXT, output, ENV_OUTPUT, RUN_CONFIG_PATH_MAX, 0)                      \
    X(FD, status_fd, ENV_STATUS_FD, 0, 0)                                    \
    X(FLAG, accesses, ENV_ACCESSES, 0, 0)                                    \
    X(WORDS, window, ENV_WINDOW, "all|main|marks", 0)                        \
    X(TEXT, compress, ENV_COMPRESS, 16, 0)   /* balanced, fast, small */     \
    X(TEXT, writer, ENV_WRITER, 16, 0)       /* off, mix, all */             \
    X(NUM, buffer_records, ENV_BUFFER_RECORDS, 64, 1 << 20)                  \
    X(TEXT, consumer, ENV_CONSUMER, RUN_CONFIG_PATH_MAX, 0)                  \
    X(TEXT, tool, ENV_TOOL, 16, 0)           /* heat, share, uninit */       \
    X(SIZE, tool_chunk, ENV_TOOL_CHUNK, 0, 0)                                \
    X(FLAG, check_once, ENV_TOOL_CHECK_ONCE, 0, 0)                           \
    /* what is recorded */                                                   \
    X(LIST, only, ENV_ONLY, 0, 0)                                            \
    X(LIST, ignore, ENV_IGNORE, 0, 0)                                        \
    X(LIST, watch, ENV_WATCH, 0, 0)                                          \
    X(LIST, watch_sites, ENV_WATCH_SITES, 0, 0)                              \
    X(SIZE, stack_depth, ENV_STACK_DEPTH, 0, 0)                              \
    /* the static engine's cache, for programs started by exec */           \
    X(TEXT, cache, ENV_CACHE, RUN_CONFIG_PATH_MAX, 0)                        \
    X(TEXT, cache_salt, ENV_CACHE_SALT, 256, 0)                              \
    X(TEXT, command, ENV_COMMAND, RUN_CONFIG_PATH_MAX, 0)                    \
    X(TEXT, comm, ENV_COMM, 16, 0)                                          \
    X(LIST, bypass, ENV_BYPASS, 0, 0)                                        \
    X(LIST, tested, ENV_TESTED, 0, 0)                                        \
    /* measurement switches */                                               \
    X(LEAD1, rewrite_discard, ENV_REWRITE_DISCARD, 0, 0)                     \
    X(SET, debug_traps, ENV_DEBUG_TRAPS, 0, 0)                               \
    X(FLAG, string_elements, ENV_STRING_ELEMENTS, 0, 0)                      \
    X(WORDS, fault_path, ENV_FAULT_PATH, "|step|complete|hot", 0)             \
    X(WORDS, fault_alias, ENV_FAULT_ALIAS, "|off", 0)

#define RUN_CONFIG_FIELD_TEXT(f, a) char f[a];
#define RUN_CONFIG_FIELD_LIST(f, a) const char *f; char f##_text[RUN_CONFIG_LIST_MAX];
#define RUN_CONFIG_FIELD_FLAG(f, a) int f;
#define RUN_CONFIG_FIELD_LEAD1(f, a) int f;
#define RUN_CONFIG_FIELD_SET(f, a) int f;
#define RUN_CONFIG_FIELD_NUM(f, a) uint32_t f;
#define RUN_CONFIG_FIELD_FD(f, a) int f;
#define RUN_CONFIG_FIELD_SIZE(f, a) int64_t f;
#define RUN_CONFIG_FIELD_WORDS(f, a) int f;
#define RUN_CONFIG_FIELD(kind, f, env, a, b) RUN_CONFIG_FIELD_##kind(f, a)

typedef struct run_config {
    RUN_CONFIG_ROWS(RUN_CONFIG_FIELD)
} run_config;

/* The rows by name: RUN_CONFIG_<field>. */
#define RUN_CONFIG_INDEX(kind, f, env, a, b) RUN_CONFIG_##f,
typedef enum run_config_row {
    RUN_CONFIG_ROWS(RUN_CONFIG_INDEX) RUN_CONFIG_NROWS
} run_config_row;

#endif
