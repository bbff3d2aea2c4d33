/*
 * profile.h - what `memtap report` tells about a trace: its objects
 * (variables and sections by name, heap blocks grouped by allocation site)
 * with access counts by kind and access pattern, its hottest instructions,
 * uses after free, the allocation summary, thread sharing, and, for
 * pictures, access counts over time and address x time heatmaps.
 *
 * Counts are records as `memtap show` prints them: a block operation (Y W
 * G) counts once for each object it touches (a copy: its source and its
 * destination).  Time is the time the trace's chunks say their records
 * were made at (trace.h's memtap_trace_run_time), cut into PROFILE_BINS
 * equal spans; for a trace without times, its event order, cut into
 * PROFILE_BINS equal spans of events.
 */
#ifndef MEMTAP_REPORT_PROFILE_H
#define MEMTAP_REPORT_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "memtap/trace.h"
#include "report/heap_stacks.h"
#include "symbols/symbolizer.h"

#define PROFILE_BINS 200  /* time columns */
#define PROFILE_BIN_THREADS 8 /* threads counted per time column: the first */
#define PROFILE_ROWS 64   /* address rows of a heatmap */
#define PROFILE_HOT 8     /* hottest objects with a heatmap of their own */
#define PROFILE_CHUNK 64  /* bytes of the chunks counted (a cache line) */
#define PROFILE_CHUNKS 30 /* hottest chunks listed */

enum profile_kind { PROF_L, PROF_S, PROF_Y, PROF_W, PROF_G, PROF_KINDS };

typedef enum profile_pattern {
    PATTERN_NONE,       /* no instruction accessed it twice */
    PATTERN_SAME,       /* the same address again and again */
    PATTERN_SEQUENTIAL, /* each access right after the one before */
    PATTERN_STRIDED,    /* a constant distance apart (stride) */
    PATTERN_RANDOM,
    PATTERN_LINKED,     /* each access in another block of the site than
                           the instruction's access before: nodes linked
                           by pointers ("block to block") */
} profile_pattern;

/* Where an instruction went last (within one heap block, or an object). */
typedef struct profile_step {
    uint64_t addr, size, block;
    int64_t delta;
    uint32_t object;
    int valid;
} profile_step;

/* How an object's accesses moved: each instruction's distance from its
 * own access before, to the same object (and heap block). */
typedef struct profile_walk {
    uint64_t moves, same, sequential, strided;
    uint64_t hops;             /* to another block of the same object */
    int64_t cand[4];           /* most frequent distances (Misra-Gries) */
    uint64_t cand_n[4];
} profile_walk;

/* A field of a heap site's blocks as the program accesses it: an offset
 * and a size its instructions use. */
typedef struct profile_field {
    char *name;          /* its member ("next", "[2].key") when the site's
                            type is known, else NULL */
    uint32_t offset, size;
    uint64_t loads, stores;
    uint64_t threads;    /* bit i: thread i (profile order, < 64) */
    uint16_t first_bin, last_bin; /* the run's spans (bins) of its first
                            and last access */
    int hot;             /* a tenth or more of its site's field accesses */
} profile_field;
#define PROFILE_FIELDS 32        /* more (offset, size) pairs: not a struct */
#define PROFILE_FIELD_BLOCK 4096 /* larger blocks: no field map */

typedef struct profile_object {
    char *name;          /* "config", "libc.so.6:.bss", "malloc@main+26" */
    const char *region;  /* "[heap]", "[mmap]", "[prog]", "[stack]"... */
    int heap;            /* the blocks of one allocation site */
    uint64_t site;       /* heap: the allocation call site */
    uint64_t n[PROF_KINDS];
    uint64_t accesses, bytes_read, bytes_written;
    uint64_t uaf;        /* accesses to its blocks after they were freed */
    uint64_t threads, writers; /* bit i: thread i (profile order, < 64);
                            heap: of all its blocks together */
    /* heap: the truth per block while it is live, as sharing is (a
     * site's blocks each touched by one thread share nothing) */
    uint32_t block_threads, block_writers; /* the most of one block */
    uint64_t shared_blocks;    /* blocks several threads touched */
    uint64_t lo, hi;     /* addresses touched (heap: offsets in blocks) */
    profile_walk walk;
    profile_pattern pattern;
    int64_t stride;      /* PATTERN_STRIDED: the distance */
    /* heap sites */
    uint64_t allocs, alloc_bytes, frees, temporary;
    uint64_t live, live_bytes, peak_bytes;
    /* heap sites: their blocks' fields, by offset (NULL: none, or more
     * than PROFILE_FIELDS, or blocks over PROFILE_FIELD_BLOCK bytes: not a
     * record's layout), the largest block, its bytes no access touched */
    profile_field *fields;
    uint32_t nfields, last_field;
    int no_fields;
    uint64_t block_size, untouched;
    char *type;          /* the blocks' type ("struct node"), from DWARF */
    char *untouched_members; /* the members no access touched ("pad, name") */
    int hot;             /* index of its heatmap, or -1 */
} profile_object;

typedef struct profile_insn {
    uint64_t pc;
    uint64_t n[PROF_KINDS];
    uint64_t accesses, uaf;
    uint32_t object;     /* the object it touched last */
    char *name, *line;   /* "main+26", "prog.c:12" (or NULL) */
    profile_step last;   /* its access before (the pattern's walk) */
} profile_insn;

typedef struct profile_thread {
    uint32_t tid;
    uint64_t events, accesses;
} profile_thread;

typedef struct profile_bin {
    uint64_t events;
    uint64_t n[PROF_KINDS];
    uint64_t allocs, frees;
    uint64_t live_bytes; /* the most heap bytes allocated during the bin */
    uint64_t live_end;   /* those at its end */
    uint64_t thread_n[PROFILE_BIN_THREADS]; /* accesses of the first threads
                                               (profile.threads' order) */
} profile_bin;

/* A heatmap: rows of addresses (an object's offsets, or the heap's
 * touched pages in address order) x PROFILE_BINS columns of time. */
typedef struct profile_heatmap {
    int object;          /* the object's index, or -1: the whole heap */
    uint64_t row_lo[PROFILE_ROWS], row_hi[PROFILE_ROWS];
    char *row_name[PROFILE_ROWS]; /* static data: the row's first byte's
                                     name ("counters[3]"), else NULL */
    uint32_t rows;
    uint64_t cells[PROFILE_ROWS][PROFILE_BINS];
} profile_heatmap;

/* A 64-byte chunk of memory and its accesses (an access counts for each
 * chunk it touches; a block operation too, as `memtap heat` counts). */
typedef struct profile_chunk {
    uint64_t addr;       /* its first byte */
    uint64_t accesses;
    uint32_t object;     /* the object it was first touched in */
    uint64_t offset;     /* heap: its first byte's offset in the block */
    uint64_t hot_addr;   /* static data: an address of the object most of
                            its accesses went to, which names it */
    char *name;          /* "malloc@main+26+64", "table[16]" (the hottest
                            chunks, after build) */
} profile_chunk;

typedef struct profile_heap {
    uint64_t allocs, frees, alloc_bytes, temporary;
    uint64_t live, live_bytes, peak_bytes, peak_event;
    uint64_t mappings, mapped_bytes;
} profile_heap;

typedef struct profile {
    profile_object *objects;  /* by accesses, most first (after build) */
    size_t nobjects;
    profile_insn *insns;      /* by accesses, most first */
    size_t ninsns;
    profile_thread *threads;  /* in order of first event */
    size_t nthreads;
    profile_bin bins[PROFILE_BINS];
    profile_heap heap;
    heap_stacks stacks;       /* per allocation call stack */
    uint64_t events, accesses, uaf;
    uint64_t duration_us;     /* the trace's, 0: none known (bins are
                                 spans of events then, else of time) */
    uint64_t n[PROF_KINDS];
    profile_heatmap *maps;    /* [0] the heap, then the hot objects */
    size_t nmaps;
    profile_chunk *chunks;    /* the hottest, most first (after build) */
    size_t nchunks;
    void *state;              /* the builder's (profile.c) */
} profile;

/* Walks the trace (opened, at its start) and fills p.  progress, when not
 * NULL, is called once per event.  Returns MEMTAP_OK or the walk's error
 * (p is then freed). */
int profile_build(profile *p, memtap_trace *t, symbolizer *sym,
                  void (*progress)(void *), void *arg);

/* Walks the trace again (reopened at its start) to fill the heatmaps of
 * the heap and of the PROFILE_HOT hottest objects. */
int profile_heatmaps(profile *p, memtap_trace *t,
                     void (*progress)(void *), void *arg);

void profile_free(profile *p);

const char *profile_pattern_name(profile_pattern pattern);

#endif
