/*
 * runstatus.h - the page `memtap run` shares with every process it traces
 * (a memfd whose descriptor MEMTAP_STATUS_FD names; forks and execs keep
 * it): what they wrote and what they lost, kept current while they run, so
 * that the command can report the state of the trace during the run and
 * after it, even when the trace itself could no longer be written.
 */
#ifndef MEMTAP_TRACE_RUNSTATUS_H
#define MEMTAP_TRACE_RUNSTATUS_H

#include <stdatomic.h>
#include <stdint.h>

#define MEMTAP_STATUS_MAGIC 0x5453544du /* "MTST" */
#define MEMTAP_STATUS_VERSION 5u
#define MEMTAP_STATUS_SIZE 4096u

typedef struct memtap_run_status {
    uint32_t magic;                 /* MEMTAP_STATUS_MAGIC */
    uint32_t version;               /* MEMTAP_STATUS_VERSION */
    _Atomic uint64_t events;        /* records written to trace files */
    _Atomic uint64_t bytes;         /* bytes written to trace files */
    _Atomic uint64_t lost;          /* records that never reached a file */
    _Atomic int32_t write_errno;    /* the first failed write's errno */
    _Atomic uint32_t processes;     /* processes that opened a trace */
    _Atomic uint32_t no_file;       /* processes whose trace file could
                                       not be created */
    _Atomic uint32_t untraced_execs; /* execs of programs no traced
                                       process can follow (statically
                                       linked: LD_PRELOAD never reaches
                                       them) */
    uint64_t run_id;                /* the run's own number: each trace
                                       says it in INFO "run", so that the
                                       summary counts this run's files
                                       and no other's */
    /* memtap cachesim -- PROGRAM reads the trace file whose inode is
     * follow_ino as it is written: whoever writes that file waits while
     * it holds more than follow_ahead bytes (0: no waiting) past the
     * follow_read bytes the model has read */
    _Atomic uint64_t follow_ino;
    _Atomic uint64_t follow_ahead;
    _Atomic uint64_t follow_read;
    /* traced processes that made themselves subreapers: while there is
     * none, a process's writer is an orphan memtap run takes in (not its
     * child, which a wait with __WALL would wait for); after, its child
     * (an orphan would go to the subreaper, whose plain waits see it) */
    _Atomic uint32_t subreapers;
    /* memtap run's pid: the program it started (its child) ends when
     * memtap run does, as it would without memtap between them */
    int32_t run_pid;
} memtap_run_status;

#endif
