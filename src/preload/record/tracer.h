/*
 * tracer.h - the recording core of libmemtap.so: per-thread record buffers,
 * the global sequence and allocation counters, the output file and its
 * metadata chunks.  Everything here is safe to call from wrappers and from
 * signal handlers: no malloc, no stdio, no locks on the recording path.
 * It knows no engine and no host by name: they register as clients.
 */
#ifndef MEMTAP_PRELOAD_TRACER_H
#define MEMTAP_PRELOAD_TRACER_H

#include <stdint.h>

#include "memtap/trace.h"
#include "trace/pack.h"

#define MEMTAP_EXPORT __attribute__((visibility("default")))

struct fmt_buf;

/* An engine or a host the recorder serves (the runtime of rewritten
 * programs, the shadow-tool host, the process lifecycle).  Any member may
 * be NULL; clients are called in the order they were added. */
typedef struct tracer_client {
    /* before the calling thread records anything but an access: hand
     * over the accesses it logged and has not handed over */
    void (*sync)(void);
    /* whether accesses go to take() instead of the trace */
    int (*active)(void);
    /* an event the client may keep out of the trace (returns 1) */
    int (*take)(uint8_t kind, uint64_t pc, uint64_t addr, uint64_t size,
                uint64_t addr2);
    void (*thread_exit)(void);        /* the calling thread ends */
    void (*after_fork_child)(void);   /* before the child's trace opens */
    void (*finish)(void);             /* before the last flush */
    void (*end_stats)(struct fmt_buf *b); /* lines of the closing note */
    void (*internal_begin)(void);     /* the thread entered memtap's code */
    void (*internal_done)(void);      /* the thread left memtap's code */
} tracer_client;

/* Adds a client (at start-up, before tracer_init); 0, or -1 when full. */
int tracer_add_client(const tracer_client *c);

/* True once the library is configured to record (MEMTAP_OUTPUT set). */
int tracer_enabled(void);

/* Hands over the accesses the calling thread logged and has not handed
 * over (the clients' sync), as before any other event. */
void tracer_sync(void);

/* Appends one record for the calling thread (seq is assigned here). */
void tracer_record(uint8_t kind, uint8_t flags, uint64_t pc, uint64_t addr,
                 uint64_t size, uint64_t addr2, uint64_t aux);
/* The same with its count (a heap event's: its call stack). */
void tracer_record_counted(uint8_t kind, uint8_t flags, uint64_t pc,
                           uint64_t addr, uint64_t size, uint64_t addr2,
                           uint64_t aux, uint32_t count);

/* The site table of a rewritten module, tag by tag from 0 (the memory
 * stays the module's), the same compressed by the rewriter (frames,
 * rt/abi.h's sites_z; NULL: none) and the records of each site's entry
 * (rt/abi.h's records; NULL: worked out here): written to the trace (and
 * to every forked child's) before the module may log.  -1 when it could
 * not be: the module must not log then (its entries would name no
 * site). */
int tracer_add_sites(uint32_t tag, uint64_t bias, const memtap_site *sites,
                     uint32_t nsites, const uint8_t *frames,
                     size_t frames_len, const uint8_t *records);

/* Appends the calling thread's entries logged by rewritten code that keep
 * keeps (NULL: all; see trace/pack.h) as access runs (one sequence
 * reservation per run); what cannot be written is counted lost.  Returns
 * 0, taking nothing, when a shadow tool runs: it gets the accesses as
 * records through tracer_record_accesses, one by one. */
int tracer_append_entries(const trace_entry *e, const trace_entry *end,
                          trace_keep *keep);
void tracer_record_accesses(const memtap_record *r, size_t n);

/* Next allocation number (MadT's dynamic memory counter). */
uint64_t tracer_next_alloc_id(void);
/* n records an engine could not keep (no memory): counted lost, so that
 * the trace says it is incomplete. */
void tracer_lose(uint64_t n);

/* Reads the configuration, opens the output, writes the metadata. */
void tracer_init(void);

/* Writes every thread's buffered records (skipping a buffer that is being
 * flushed by code this call interrupted). */
void tracer_flush_all(void);

/* Flushes the calling thread and releases its buffer (thread exit). */
void tracer_thread_exit(void);

/* Flushes everything and writes the closing INFO chunk; later records are
 * written through immediately.  `how` names the ending ("exit", "signal"). */
void tracer_finish(const char *how, int code);
/* The instruction a fault that ends the process stopped at (its trace's
 * end_pc, for memtap run to tell its own faults from the program's). */
void tracer_note_fault_pc(uint64_t pc);
/* An exec of a program no engine follows (memtap run's status page). */
void tracer_note_untraced_exec(void);

/* The process made itself a subreaper (PR_SET_CHILD_SUBREAPER): the
 * writers started from now on are their processes' children. */
void tracer_note_subreaper(void);

/* The descriptors memtap keeps open in the program (the trace, the status
 * page memtap run shares, the writer's watch of the process): fills fds,
 * returns how many (0 to 3). */
int tracer_guarded_fds(int fds[3]);

/* Whether the calling process is the one this trace belongs to (not a
 * vfork or posix_spawn child still sharing its memory). */
int tracer_owns_process(void);

/* After an exec that failed: recording goes on as before the attempt. */
void tracer_exec_failed(void);

/* In the child after fork: drops the parent's buffers and opens the child's
 * own trace file. */
void tracer_after_fork_child(void);

/* Writes a MODULES chunk (encoded entries). */
void tracer_write_modules(const void *entries, uint32_t len, uint32_t count);

/* Writes an encoded metadata chunk (tables.c's) as it is. */
void tracer_write_meta(const void *chunk, size_t len);
/* The calling thread's id, as chunks name it. */
uint32_t tracer_tid(void);
/* How chunks are compressed (memtap run --compress): a trace_compression
 * (trace/chunk.h). */
int tracer_compression(void);

/* Resolves the functions heap.c forwards to (called at start-up). */
void heap_resolve_next(void);
/* Resolves the functions blockops.c forwards to. */
void blockops_resolve(void);

/* Non-zero while the calling thread runs memtap's own code: allocations it
 * makes then are memtap's and are not recorded. */
int tracer_internal(void);
void tracer_internal_enter(void);
void tracer_internal_leave(void);

/* Reads a whole /proc file into memory of memtap's own (free it with
 * raw_unmap(*out, *map_size)); returns its length. */
size_t tracer_read_proc(const char *path, char **out, size_t *map_size);

/* Current sequence number (the next event will get it or a later one). */
uint64_t tracer_seq(void);


#endif
