/*
 * tables.c - the rows of the trace's tables before they reach the file
 * (tables.h).  A process's new call stacks come by the thousand while it
 * starts, a row each: one chunk each would be a system call and a zstd
 * frame per row, ten times the bytes of the events naming them.  Rows
 * are gathered in a buffer of memtap's own and written as one TABLE
 * chunk when it fills, and before any chunk of events: the tracer calls
 * tables_before_events before it compresses one, and the buffer's lock is
 * held from the rows' copy to the end of their write, so that an event
 * reaches the file after the rows it names (a trace cut short by kill -9
 * names no stack it lacks) - unless another thread held the lock just
 * then: its rows follow a moment later, and the tracer writes all that
 * are left when the process ends.
 *
 * The lock is a spin lock a thread takes only outside signal handlers of
 * its own making: a handler that interrupts its thread inside it (the
 * handler's malloc, a fatal signal's flush) neither waits nor writes.
 */
#define _GNU_SOURCE
#include "tables.h"

#include "sys/rawsys.h"
#include "sys/spin.h"
#include "trace/chunk.h"
#include "tracer.h"

#include <string.h>

#define BUF_BYTES (64u << 10)

static struct {
    atomic_int lock;
    int ready;                  /* 1: buffers mapped; -1: no memory */
    uint32_t table, rows;       /* the kind and rows gathered */
    size_t len;                 /* their bytes, after the header's room */
    uint8_t *buf;
    ZSTD_CCtx *cctx;
    void *out;
    size_t out_cap;
    _Atomic uint64_t added, written; /* calls whose rows were added, of
                                        them written */
} tab;

static __thread int tls_inside __attribute__((tls_model("initial-exec")));

static int acquire(int wait)
{
    if (tls_inside)
        return 0;
    tls_inside = 1; /* before the lock: a handler never waits for it */
    while (!spin_try(&tab.lock)) {
        if (!wait) {
            tls_inside = 0;
            return 0;
        }
        raw_syscall3(SYS_sched_yield, 0, 0, 0);
    }
    return 1;
}

static void release(void)
{
    spin_release(&tab.lock);
    tls_inside = 0;
}

static void setup_locked(void)
{
    trace_compression c = (trace_compression)tracer_compression();
    size_t ws = trace_chunk_workspace_size(BUF_BYTES, c);
    tab.out_cap = trace_chunk_bound(BUF_BYTES);
    uint8_t *mem = raw_map(ws + tab.out_cap + BUF_BYTES);
    tab.cctx = mem ? trace_chunk_context(mem, ws, c) : NULL;
    tab.out = mem + ws;
    tab.buf = mem + ws + tab.out_cap;
    tab.ready = tab.cctx ? 1 : -1;
}

static void flush_locked(void)
{
    if (tab.rows) {
        memtap_table_header h = { .table = tab.table, .rows = tab.rows };
        memcpy(tab.buf, &h, sizeof h);
        size_t n = trace_chunk_encode(tab.cctx, MEMTAP_CHUNK_TABLE,
                                      tracer_tid(), tab.rows, tab.buf,
                                      sizeof h + tab.len, tab.out,
                                      tab.out_cap);
        if (n)
            tracer_write_meta(tab.out, n);
        tab.rows = 0;
        tab.len = 0;
    }
    atomic_store(&tab.written, atomic_load(&tab.added));
}

int tables_add(uint32_t table, uint32_t rows, const void *raw, size_t len)
{
    const size_t room = BUF_BYTES - sizeof(memtap_table_header);
    if (!tracer_enabled() || len > TABLES_ROWS_MAX || !acquire(1))
        return -1;
    if (!tab.ready)
        setup_locked();
    int ok = tab.ready > 0;
    if (ok && tab.rows && (tab.table != table || tab.len + len > room))
        flush_locked();
    if (ok) {
        memcpy(tab.buf + sizeof(memtap_table_header) + tab.len, raw, len);
        tab.table = table;
        tab.rows += rows;
        tab.len += len;
        atomic_fetch_add(&tab.added, 1);
    }
    release();
    return ok ? 0 : -1;
}

void tables_before_events(int wait)
{
    if (atomic_load(&tab.added) == atomic_load(&tab.written) || !acquire(wait))
        return;
    flush_locked();
    release();
}

void tables_after_fork_child(void)
{
    atomic_store(&tab.lock, 0);
    tab.rows = 0;
    tab.len = 0;
    atomic_store(&tab.added, 0);
    atomic_store(&tab.written, 0);
}
