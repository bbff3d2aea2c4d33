/*
 * memtap/consumer.h - a user's own consumer of the accesses that
 * instrumented code (memtap instrument) logs, instead of the trace.
 *
 * Build a shared object that defines memtap_consume (and, if it wants to
 * know when the run ends, memtap_consume_end), then run
 *
 *     memtap run --consumer ./libmine.so ./prog.mt ARGS
 *
 * memtap calls memtap_consume with batches of accesses in the order each
 * thread made them, on that thread, whenever its buffer of 16 K entries
 * fills, before any heap event of the thread, at thread exit and at
 * process exit; memtap_consume_end is called once, after the last batch.
 * Accesses the consumer makes itself are not logged.  The consumer runs in
 * the middle of the program (not in a signal handler): when the C library
 * itself is instrumented it may be called from inside it, so it should
 * not call malloc or stdio then.  Heap and module events still go to the
 * trace file.
 */
#ifndef MEMTAP_CONSUMER_H
#define MEMTAP_CONSUMER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct memtap_access {
    uint64_t pc;      /* runtime address of the original instruction */
    uint64_t addr;    /* effective address */
    uint32_t size;    /* bytes accessed */
    uint32_t count;   /* accesses it stands for: 1, or the class' count in
                         the ma and aia modes */
    uint8_t kind;     /* 'L' (load) or 'S' (store); a read-modify-write
                         instruction gives one of each */
    uint8_t reserved[7];
} memtap_access;

/* Receives n accesses of the calling thread. */
void memtap_consume(const memtap_access *a, size_t n);
/* Optional: the run is over (called at exit or exec). */
void memtap_consume_end(void);

#ifdef __cplusplus
}
#endif
#endif
