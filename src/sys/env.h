/*
 * sys/env.h - the environment variables through which the memtap command
 * and the code it puts into traced processes (libmemtap.so, the rewritten
 * code's runtime, the loader audit module, `memtap cache add` run from
 * it) talk: one name each, on both sides.  What a user may set is listed
 * in `memtap run --help`.
 */
#ifndef MEMTAP_SYS_ENV_H
#define MEMTAP_SYS_ENV_H

/* the run */
#define ENV_OUTPUT "MEMTAP_OUTPUT"         /* the trace file */
#define ENV_STATUS_FD "MEMTAP_STATUS_FD"   /* the status page shared with
                                              the command */
#define ENV_ACCESSES "MEMTAP_ACCESSES"     /* 1: record accesses */
#define ENV_WINDOW "MEMTAP_WINDOW"         /* all, main or marks */
#define ENV_COMPRESS "MEMTAP_COMPRESS"     /* balanced, fast, small */
#define ENV_WRITER "MEMTAP_WRITER"         /* off, mix, all */
#define ENV_BUFFER_RECORDS "MEMTAP_BUFFER_RECORDS"
#define ENV_CONSUMER "MEMTAP_CONSUMER"     /* memtap_consume's library */
#define ENV_TOOL "MEMTAP_TOOL"             /* heat, share, uninit */
#define ENV_TOOL_CHUNK "MEMTAP_TOOL_CHUNK"
#define ENV_TOOL_CHECK_ONCE "MEMTAP_TOOL_CHECK_ONCE"
/* what is recorded */
#define ENV_ONLY "MEMTAP_ONLY"             /* heap, static, stack */
#define ENV_IGNORE "MEMTAP_IGNORE"         /* ranges never recorded */
#define ENV_WATCH "MEMTAP_WATCH"           /* the only ranges recorded */
#define ENV_WATCH_SITES "MEMTAP_WATCH_SITES" /* and the blocks made at
                                                 these call sites */
/* the static engine's cache */
#define ENV_CACHE "MEMTAP_CACHE"           /* its directory, for the audit
                                              module */
#define ENV_CACHE_DIR "MEMTAP_CACHE_DIR"   /* the user's choice of it */
#define ENV_CACHE_MAX "MEMTAP_CACHE_MAX"   /* the copies' bytes at most */
#define ENV_CACHE_SALT "MEMTAP_CACHE_SALT" /* the settings' part of keys */
#define ENV_COMMAND "MEMTAP_COMMAND"       /* the memtap that fills it */
#define ENV_BYPASS "MEMTAP_BYPASS"         /* the bypass rules of copies */
#define ENV_TESTED "MEMTAP_TESTED"         /* code whose loads copies
                                              skip: modules, PATH@LO-HI */
#define ENV_TESTED_MAX 4096                /* its longest value, with the
                                              terminator */
#define ENV_IMPLICIT "MEMTAP_IMPLICIT"     /* 1: copies log push/pop/call/
                                              ret's stack slots */
/* where things are, and measurement switches */
#define ENV_PRELOAD "MEMTAP_PRELOAD"       /* libmemtap.so */
#define ENV_COMM "MEMTAP_COMM"             /* the name a program run from its
                                              rewritten copy takes: the
                                              last part of the path exec'd */
#define ENV_READER_MEMORY "MEMTAP_READER_MEMORY"
#define ENV_FOLLOW_AHEAD "MEMTAP_FOLLOW_AHEAD" /* MiB a followed trace's
                                              writer may get ahead */
#define ENV_REWRITE_DISCARD "MEMTAP_REWRITE_DISCARD"
#define ENV_DEBUG_TRAPS "MEMTAP_DEBUG_TRAPS"
#define ENV_STRING_ELEMENTS "MEMTAP_STRING_ELEMENTS" /* 1: string operations
                                              element by element */
#define ENV_STACK_DEPTH "MEMTAP_STACK_DEPTH" /* frames of a heap event's
                                              call stack (0: none) */
#define ENV_FAULT_PATH "MEMTAP_FAULT_PATH" /* step: the fault engine never
                                              completes in its handler;
                                              complete: no hot sites; hot:
                                              every completed site hot */
#define ENV_FAULT_ALIAS "MEMTAP_FAULT_ALIAS" /* off: the fault engine reaches
                                              hot pages through
                                              /proc/self/mem, never an
                                              alias */

#endif
