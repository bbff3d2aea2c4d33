/*
 * tracer.c - the recording core of libmemtap.so.
 *
 * Each thread owns a buffer in memory mapped straight from the kernel,
 * with its own zstd workspace, into which its events are packed as they
 * come (trace/chunk.h): records one by one, and what rewritten code logs
 * as access runs of {site, address} pairs, which the reader expands
 * through the site tables written here once per module.  A full buffer
 * becomes one chunk written with a single write(2) to the O_APPEND
 * output, so threads never wait for each other.  With a CPU to spare, a
 * hidden process of memtap's own that shares the program's memory (the
 * writer: no thread of the program's, which a program may count)
 * compresses and writes full buffers: a thread copies its full buffer into a hand (one of HANDS, with
 * stores that bypass its caches) and packs on into its own; with HANDS
 * queued, it takes the oldest the writer has not begun back and
 * compresses it itself, and writes it after the ones before it, so a
 * thread's chunks stay in order.  Each thread packs its own events: what
 * crosses to the writer's CPU is the packed bytes, a tenth of the entries
 * rewritten code logs (the writer packed them before, and moving the
 * entries between the caches of two CPUs cost more CPU than packing:
 * gzip -9 1.74 -> 1.21 s).  A buffer is
 * guarded by a try-lock that is never waited on: its owner drops a record
 * rather than wait (only possible when a signal handler records while the
 * owner is mid-flush), and a flush-all at exit or on a fatal signal skips
 * a buffer that is busy.
 * Buffers of exited threads are reused by new threads.
 *
 * One file: the buffers, their packing, the handover to the writer and
 * the flush at exit share the per-thread state and its try-lock protocol,
 * which no other file should see.
 */
#define _GNU_SOURCE
#include "tracer.h"
#include "stacks.h"
#include "tables.h"
#include "preload/core/filters.h"
#include "sys/rawsys.h"
#include "preload/core/config.h"
#include "preload/core/defer.h"
#include "sys/env.h"
#include "sys/spin.h"

#include "preload/core/fmt.h"
#include "preload/core/hidden_task.h"
#include "preload/core/own_text.h"
#include "rt/abi.h"
#include "trace/chunk.h"
#include "trace/runstatus.h"

#include <emmintrin.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_RECORDS 65536u       /* a chunk's (16384: gzip -9, 1.38
                                        against 1.21 s of CPU; 262144 took
                                        4 % less CPU with the writer, but a
                                        reader merging threads holds a
                                        chunk of records (56 bytes each)
                                        per thread: 14.7 MB) */
#define BYTES_PER_RECORD 32u         /* buffer bytes per record of the cap */
#define PAUSE_US 20000u              /* a thread that packed nothing for
                                        this long paused (note_time) */
#define MARK_EVERY 4096u             /* records between its looks */
#define MAX_SITE_TABS (1u << (32 - MEMTAP_SITE_BITS))
#define MAX_CLIENTS 4
#define META_MAX (4u << 20)          /* largest metadata chunk (maps text) */
#define TRACE_FD_MIN 700             /* keep our descriptor out of the way */

/* Who writes full buffers (MEMTAP_WRITER): each thread (off), the writer
 * as far as it keeps up (mix: the default with a CPU to spare), or the
 * writer alone, threads waiting for it (all: for tests).  The writer is a
 * hidden process, not a thread: a program with one thread stays one,
 * which chromium's zygote checks in /proc/self/task and the kernel for
 * unshare(CLONE_NEWUSER). */
enum { WRITER_NONE, WRITER_SHARED, WRITER_ALL };

/* How long the idle writer sleeps before it looks whether its program is
 * still there (killed, it flushed nothing and stopped no writer). */
#define WRITER_WATCH_NS 100000000l
#define WRITER_NAME "memtap-writer"    /* memtap run knows it by it
                                          (run_wait.c), and the next */
#define ENDING_NAME "memtap-ending"    /* once its program has ended */

/* The state of a full buffer handed to the writer (hand). */
enum { HAND_FREE, HAND_QUEUED, HAND_WRITING };
/* Full buffers a thread may have queued for the writer: while the writer
 * compresses one, the thread packs on and hands over the next without
 * compressing anything itself (with one, the walk's set-up under memtap
 * run took 75 ms more than natively, with three 68, with six 68). */
#define HANDS 3u

typedef struct tracer_hand {
    _Atomic uint32_t state;          /* HAND_*: buf is the writer's to
                                        write while not HAND_FREE */
    uint32_t tid, n;                 /* the chunk buf holds */
    uint32_t time;                   /* when it closed (chunk_time) */

    size_t len;                      /* packed bytes in buf, or */
    size_t clen;                     /* the chunk encoded already (0: not) */
    uint8_t *buf;                    /* a buffer, the slot's while free */
} tracer_hand;
typedef struct tracer_thread {
    _Atomic uint32_t owner;          /* tid of the owning thread, 0 = free */
    atomic_int lock;                 /* try-lock over the buffer */
    _Atomic uintptr_t holder;        /* lock_holder() of the thread that
                                        holds it, 0 (or not yet said) */
    uint32_t tid;
    uint32_t n;                      /* records in the buffer */
    uint32_t mark;                   /* chunk_time when records were last
                                        put in it (note_time), */
    uint32_t unmarked;               /* and records and entries since */
    uint8_t *buf;                    /* packed records and access runs */
    size_t len, buf_cap;
    trace_packer packer;             /* the state of buf's packing */
    tracer_hand hands[HANDS];        /* hand n in slot n % HANDS */
    _Atomic uint32_t hand_head;      /* hands before it are written */
    _Atomic uint32_t hand_tail;      /* hands queued (by the buffer's
                                        holder) */
    atomic_uint waiters;             /* threads asleep on a hand */
    ZSTD_CCtx *cctx;
    trace_stream stream;             /* its chunks' (trace_stream) */
    void *out;
    size_t out_cap;
    size_t map_size;
    struct tracer_thread *next;      /* registry, append-only */
} tracer_thread;

static struct {
    int enabled;
    int fd;
    pid_t pid;                       /* the process that owns the output */
    uint32_t cap;
    char base_path[4096];
    char path[4096];
    char parent_path[4096];
    uint64_t fork_seq;
    long long start_ns;              /* CLOCK_MONOTONIC when the output
                                        opened: the chunks' time 0 */
    _Atomic uint64_t seq;
    _Atomic uint64_t alloc;
    _Atomic uint64_t dropped;        /* records lost, for any reason */
    _Atomic int write_errno;         /* the first failed write's */
    _Atomic uint64_t fault_pc;       /* the instruction a fatal fault
                                        stopped at, or 0 */
    memtap_run_status *status;       /* shared with memtap run, or NULL */
    int status_fd;
    int watch_fd;                    /* tells the writer of the process's
                                        end (hidden_task_watch), or -1 */
    uint64_t file_ino;               /* the output's inode */
    _Atomic uint64_t file_bytes;     /* bytes written to it */
    int unfollowed;                  /* the model that read it stopped */
    _Atomic uint64_t follow_waits;   /* chunks that waited for it */
    _Atomic(tracer_thread *) threads;
    atomic_int finished;
    atomic_int meta_lock;
    ZSTD_CCtx *meta_cctx;
    void *meta_out;
    size_t meta_out_cap;
    trace_site_table site_tabs[MAX_SITE_TABS];
    struct {
        const uint8_t *p;            /* the tables compressed (or NULL) */
        size_t len;
    } site_frames[MAX_SITE_TABS];
    _Atomic uint32_t nsite_tabs;     /* tags below are filled in */
    unsigned nclients;
    trace_compression compression;   /* MEMTAP_COMPRESS */
    struct {
        int wanted;                  /* WRITER_*: MEMTAP_WRITER, CPUs */
        atomic_int started;          /* in this process */
        atomic_int stop;             /* it ends once no work is left */
        hidden_process proc;
        _Atomic uint32_t work;       /* bumped for every buffer handed over */
        atomic_int sleeping;         /* it waits on work: wake it */
        ZSTD_CCtx *cctx;
        void *out;
        size_t out_cap;
        _Atomic uint64_t chunks;     /* chunks the writer wrote */
    } writer;
} rec = { .fd = -1, .status_fd = -1, .watch_fd = -1 };

/* The clients' hooks, one array each, so that a hook no client has costs
 * one compare on the recording path. */
#define TRACER_HOOKS(X) X(sync) X(active) X(take) X(thread_exit) \
    X(after_fork_child) X(finish) X(end_stats) X(internal_begin) \
    X(internal_done)
#define HOOK_ARRAY(name) \
    __typeof__(((tracer_client *)0)->name) name[MAX_CLIENTS]; unsigned n_##name;
static struct { TRACER_HOOKS(HOOK_ARRAY) } hooks;

int tracer_add_client(const tracer_client *c)
{
    if (rec.nclients == MAX_CLIENTS)
        return -1;
    rec.nclients++;
#define HOOK_ADD(name) \
    if (c->name)       \
        hooks.name[hooks.n_##name++] = c->name;
    TRACER_HOOKS(HOOK_ADD)
#undef HOOK_ADD
    return 0;
}

/* Calls hook `fn` of every client that has it. */
#define EACH_CLIENT(fn, ...)                                               \
    do {                                                                   \
        for (unsigned ci_ = 0; ci_ < hooks.n_##fn; ci_++)                  \
            hooks.fn[ci_](__VA_ARGS__);                                    \
    } while (0)

/* Whether a client takes accesses instead of the trace. */
static int clients_active(void)
{
    for (unsigned i = 0; i < hooks.n_active; i++)
        if (hooks.active[i]())
            return 1;
    return 0;
}

/* Whether a client keeps the event out of the trace. */
static int clients_take(uint8_t kind, uint64_t pc, uint64_t addr,
                        uint64_t size, uint64_t addr2)
{
    for (unsigned i = 0; i < hooks.n_take; i++)
        if (hooks.take[i](kind, pc, addr, size, addr2))
            return 1;
    return 0;
}

static __thread tracer_thread *tls_self __attribute__((tls_model("initial-exec")));
static __thread int tls_internal __attribute__((tls_model("initial-exec")));
static __thread int tls_exited __attribute__((tls_model("initial-exec")));
static __thread int tls_writer __attribute__((tls_model("initial-exec")));
/* What this thread is in the middle of, for a flush-all from a signal
 * handler that interrupted it (which must not wait for itself): writing
 * that hand (write_hand), and whether the hand's chunk is written yet. */
static __thread tracer_hand *tls_hand __attribute__((tls_model("initial-exec")));
static __thread int tls_hand_put __attribute__((tls_model("initial-exec")));

/* write(2) from memtap's own code (not trapped by the syscall filter).
 * Returns 0 or a negative errno. */
static int raw_write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        long n = raw_syscall3(SYS_write, fd, p, len);
        if (n == -EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? (int)n : -EIO;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* n records that will never reach the file; err is the failed write's
 * errno, or 0 (dropped while recording). */
static void lose(uint64_t n, int err)
{
    atomic_fetch_add(&rec.dropped, n);
    int none = 0;
    if (err)
        atomic_compare_exchange_strong(&rec.write_errno, &none, err);
    if (rec.status) {
        atomic_fetch_add(&rec.status->lost, n);
        int32_t zero = 0;
        if (err)
            atomic_compare_exchange_strong(&rec.status->write_errno, &zero, err);
    }
}

/* Blocks a program thread's signals (memtap's writer takes none) from a
 * chunk's write to the mark that says it is written: a signal is taken as
 * the write returns, and one that ends the process (tracer_flush_all)
 * must find the mark.  Returns the mask to restore. */
static uint64_t hold_signals(void)
{
    uint64_t all = ~0ull, mask = 0;
    if (!tls_writer)
        raw_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&all, (long)&mask,
                     8, 0, 0);
    return mask;
}

static void release_signals(uint64_t mask)
{
    if (!tls_writer)
        raw_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&mask, 0, 8, 0, 0);
}

/* memtap cachesim's model reads this file as it is written: while the
 * file holds more than it allows past what the model has read, the
 * writing waits (a program thread's signals held: a handler's records
 * would find its buffer taken), until the model reads on, or for good
 * once it has not moved for a second (it is gone). */
static void follow_wait(size_t len)
{
    memtap_run_status *st = rec.status;
    if (!st || rec.unfollowed || !rec.file_ino ||
        atomic_load(&st->follow_ino) != rec.file_ino)
        return;
    uint64_t ahead = atomic_load(&st->follow_ahead), read = atomic_load(&st->follow_read);
    if (!ahead || atomic_load(&rec.file_bytes) + len <= read + ahead)
        return;
    atomic_fetch_add(&rec.follow_waits, 1);
    uint64_t mask = hold_signals();
    for (int still = 0; atomic_load(&rec.file_bytes) + len > read + ahead;) {
        struct timespec ms = { 0, 1000 * 1000 };
        raw_syscall3(SYS_nanosleep, (long)&ms, 0, 0);
        uint64_t now = atomic_load(&st->follow_read);
        ahead = atomic_load(&st->follow_ahead);
        still = now == read ? still + 1 : 0;
        read = now;
        if (!ahead || still >= 1000) {
            rec.unfollowed = still >= 1000;
            break;
        }
    }
    release_signals(mask);
}

/* Writes one encoded chunk of n records (n = 0 for metadata). */
static void write_chunk(const void *buf, size_t len, uint64_t n)
{
    follow_wait(len);
    int rc = raw_write_all(rec.fd, buf, len);
    if (rc < 0) {
        lose(n, -rc);
        return;
    }
    atomic_fetch_add(&rec.file_bytes, len);
    if (rec.status) {
        atomic_fetch_add(&rec.status->events, n);
        atomic_fetch_add(&rec.status->bytes, len);
    }
}

/* The program memtap run started (a process whose parent is memtap run)
 * dies with it (SIGKILL): memtap run stands for it, so that a kill -9 of
 * memtap run (a timeout's, say) ends what the same kill of the program
 * run without memtap would (it ran on, writing its trace, an orphan).
 * The parent asked again after: it may have died before. */
static void tie_to_run(long run_pid)
{
    if (run_pid <= 0 || raw_syscall3(SYS_getppid, 0, 0, 0) != run_pid)
        return;
    raw_syscall6(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0, 0);
    if (raw_syscall3(SYS_getppid, 0, 0, 0) != run_pid)
        raw_syscall3(SYS_kill, raw_syscall3(SYS_getpid, 0, 0, 0), SIGKILL, 0);
}

/* Maps the status page memtap run shares (MEMTAP_STATUS_FD). */
static void map_status(void)
{
    int fd = config()->status_fd;
    if (fd < 0)
        return;
    long p = raw_syscall6(SYS_mmap, 0, MEMTAP_STATUS_SIZE,
                          PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p < 0 && p > -4096)
        return;
    memtap_run_status *st = (memtap_run_status *)p;
    if (st->magic != MEMTAP_STATUS_MAGIC ||
        st->version != MEMTAP_STATUS_VERSION) {
        raw_syscall3(SYS_munmap, p, MEMTAP_STATUS_SIZE, 0);
        return;
    }
    rec.status = st;
    rec.status_fd = fd;
    tie_to_run(st->run_pid);
}

int tracer_guarded_fds(int fds[3])
{
    int n = 0;
    if (rec.fd >= 0)
        fds[n++] = rec.fd;
    if (rec.status_fd >= 0)
        fds[n++] = rec.status_fd;
    if (rec.watch_fd >= 0)
        fds[n++] = rec.watch_fd;
    return n;
}

int tracer_enabled(void) { return rec.enabled; }
int tracer_internal(void) { return tls_internal; }
void tracer_internal_enter(void)
{
    if (tls_internal++ == 0)
        EACH_CLIENT(internal_begin);
}

void tracer_internal_leave(void)
{
    if (--tls_internal == 0)
        EACH_CLIENT(internal_done);
}
uint64_t tracer_seq(void) { return atomic_load(&rec.seq); }
void tracer_lose(uint64_t n) { lose(n, 0); }

uint64_t tracer_next_alloc_id(void)
{
    return atomic_fetch_add(&rec.alloc, 1);
}

static uint32_t current_tid(void)
{
    return (uint32_t)syscall(SYS_gettid);
}

/* ---- metadata chunks (rare: start, fork, dlopen, end) ---- */

static int meta_acquire(int may_wait)
{
    for (;;) {
        if (spin_try(&rec.meta_lock))
            return 1;
        if (!may_wait)
            return 0;
        sched_yield();
    }
}

static void meta_release(void) { spin_release(&rec.meta_lock); }

static void write_meta_locked(uint16_t type, uint32_t count, const void *raw,
                              size_t len)
{
    if (rec.fd < 0 || !rec.meta_cctx || len > META_MAX)
        return;
    tracer_internal_enter();
    size_t n = trace_chunk_encode(rec.meta_cctx, type, current_tid(), count,
                                  raw, len, rec.meta_out, rec.meta_out_cap);
    if (n)
        write_chunk(rec.meta_out, n, 0);
    tracer_internal_leave();
}

void tracer_write_meta(const void *chunk, size_t len)
{
    if (rec.fd >= 0) /* as write_meta_locked: none before the output opens */
        write_chunk(chunk, len, 0);
}

uint32_t tracer_tid(void) { return current_tid(); }

int tracer_compression(void) { return (int)rec.compression; }

void tracer_write_modules(const void *entries, uint32_t len, uint32_t count)
{
    if (!rec.enabled || count == 0)
        return;
    meta_acquire(1);
    write_meta_locked(MEMTAP_CHUNK_MODULES, count, entries, len);
    meta_release();
}

/* Reads a whole /proc file into memory of our own; returns its length. */
size_t tracer_read_proc(const char *path, char **out, size_t *map_size)
{
    size_t cap = 1u << 16, len = 0;
    char *buf = raw_map(cap);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    *out = buf;
    *map_size = cap;
    if (!buf || fd < 0) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    for (;;) {
        if (len == cap) {
            if (cap >= META_MAX)
                break;
            char *bigger = raw_map(cap * 2);
            if (!bigger)
                break;
            memcpy(bigger, buf, len);
            raw_unmap(buf, cap);
            buf = bigger;
            cap *= 2;
        }
        ssize_t n = read(fd, buf + len, cap - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    close(fd);
    *out = buf;
    *map_size = cap;
    return len;
}

static void write_info_start(void)
{
    char *text = raw_map(META_MAX);
    if (!text)
        return;
    fmt_buf b = { text, 0, META_MAX };
    fmt_str(&b, "pid=");
    fmt_u64(&b, (uint64_t)getpid());
    fmt_str(&b, "\nppid=");
    fmt_u64(&b, (uint64_t)getppid());
    if (rec.status && rec.status->run_id) {
        fmt_str(&b, "\nrun=");
        fmt_u64(&b, rec.status->run_id);
    }
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        fmt_str(&b, "\nexe=");
        fmt_str(&b, exe);
    }
    char *cmd;
    size_t cmd_map;
    size_t len = tracer_read_proc("/proc/self/cmdline", &cmd, &cmd_map);
    uint64_t argi = 0;
    for (size_t i = 0; i < len; argi++) {
        fmt_str(&b, "\narg");
        fmt_u64(&b, argi);
        fmt_char(&b, '=');
        for (; i < len && cmd[i]; i++)
            fmt_char(&b, cmd[i] == '\n' ? ' ' : cmd[i]);
        i++;
    }
    if (cmd)
        raw_unmap(cmd, cmd_map);
    fmt_str(&b, "\nargc=");
    fmt_u64(&b, argi);
    /* how far the main thread's stack may grow below the mapping seen now */
    struct { uint64_t cur, max; } rl;
    if (raw_syscall6(SYS_prlimit64, 0, 3 /* RLIMIT_STACK */, 0, (long)&rl, 0,
                     0) == 0) {
        fmt_str(&b, "\nstack_limit=");
        fmt_u64(&b, rl.cur == ~0ull ? 0 : rl.cur);
    }
    if (rec.compression != TRACE_BALANCED) {
        fmt_str(&b, "\ncompress=");
        fmt_str(&b, rec.compression == TRACE_FAST ? "fast" : "small");
    }
    if (rec.parent_path[0]) {
        fmt_str(&b, "\nparent_trace=");
        fmt_str(&b, rec.parent_path);
        fmt_str(&b, "\nfork_seq=");
        fmt_u64(&b, rec.fork_seq);
    }
    fmt_char(&b, '\n');
    write_meta_locked(MEMTAP_CHUNK_INFO, 0, text, b.len);
    raw_unmap(text, META_MAX);
}

static void write_maps(void)
{
    char *maps;
    size_t map_size;
    size_t len = tracer_read_proc("/proc/self/maps", &maps, &map_size);
    if (len)
        write_meta_locked(MEMTAP_CHUNK_MAPS, 0, maps, len);
    if (maps)
        raw_unmap(maps, map_size);
}

_Static_assert(sizeof(memtap_sites_header) +
                   MT_SITES_PER_FRAME * sizeof(memtap_site) <= META_MAX,
               "a piece of a site table fits a metadata chunk");

/* Writes the SITES chunk of h from the frame the rewriter made of its
 * sites (`*frames`, after its length): the chunk is h compressed here and
 * that frame.  0, or -1 when the frames do not hold that piece. */
static int write_sites_frame(const memtap_sites_header *h,
                             const uint8_t **frames, size_t *left)
{
    uint32_t len;
    if (!*frames || *left < sizeof len)
        return -1;
    memcpy(&len, *frames, sizeof len);
    if (len > *left - sizeof len)
        return -1;
    tracer_internal_enter();
    size_t n = trace_chunk_encode_sites(rec.meta_cctx, current_tid(), h,
                                       *frames + sizeof len, len, rec.meta_out,
                                       rec.meta_out_cap);
    if (n)
        write_chunk(rec.meta_out, n, 0);
    tracer_internal_leave();
    *frames += sizeof len + len;
    *left -= sizeof len + len;
    return n ? 0 : -1;
}

/* Writes the site table of tag in pieces of MT_SITES_PER_FRAME sites, a
 * SITES chunk each: from the rewriter's frames (no compression here;
 * libc's 1.1 MB took ~2.5 ms a process), or else compressed here.  -1
 * when memtap has no memory to build them in. */
static int write_sites_locked(uint32_t tag)
{
    if (rec.fd < 0 || !rec.meta_cctx)
        return 0;
    const trace_site_table *tab = &rec.site_tabs[tag];
    const uint8_t *frames = rec.site_frames[tag].p;
    size_t left = rec.site_frames[tag].len;
    char *buf = NULL;
    uint32_t first = 0;
    do {
        uint32_t n = mt_sites_piece(tab->nsites, first);
        memtap_sites_header h = { .tag = tag, .nsites = tab->nsites,
                                  .first = first, .n = n, .bias = tab->bias };
        if (write_sites_frame(&h, &frames, &left) != 0) {
            frames = NULL; /* none, or not as expected: compress here */
            if (!buf && !(buf = raw_map(META_MAX)))
                return -1;
            memcpy(buf, &h, sizeof h);
            memcpy(buf + sizeof h, tab->sites + first,
                   n * sizeof(memtap_site));
            write_meta_locked(MEMTAP_CHUNK_SITES, n, buf,
                              sizeof h + n * sizeof(memtap_site));
        }
        first += n;
    } while (first < tab->nsites);
    if (buf)
        raw_unmap(buf, META_MAX);
    return 0;
}

/* A forked child's trace describes the sites its parent's did (a table
 * missing there leaves that module's runs unreadable: the reader counts
 * those chunks as corrupt, and show warns). */
static void write_all_sites(void)
{
    uint32_t n = atomic_load(&rec.nsite_tabs);
    meta_acquire(1);
    for (uint32_t tag = 0; tag < n; tag++)
        write_sites_locked(tag);
    meta_release();
}

/* "<stem>.<pid>.mtr", or "<stem>.<pid>-<n>.mtr" for n > 0. */
static void derived_path(char *out, size_t cap, uint64_t pid, uint64_t n)
{
    size_t len = strlen(rec.base_path);
    if (len > 4 && strcmp(rec.base_path + len - 4, ".mtr") == 0)
        len -= 4;
    fmt_buf b = { out, 0, cap };
    for (size_t i = 0; i < len; i++)
        fmt_char(&b, rec.base_path[i]);
    fmt_char(&b, '.');
    fmt_u64(&b, pid);
    if (n) {
        fmt_char(&b, '-');
        fmt_u64(&b, n);
    }
    fmt_str(&b, ".mtr");
}

/* Creates a file that no other process of this run has: the base name for
 * the first process, pid-derived names for forks and execs. */
static int create_output(void)
{
    int flags = O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC;
    int fd = rec.parent_path[0] ? -1 : open(rec.base_path, flags, 0644);
    if (fd >= 0) {
        strcpy(rec.path, rec.base_path);
    } else {
        for (uint64_t n = 0; fd < 0 && n < 1000; n++) {
            derived_path(rec.path, sizeof rec.path, (uint64_t)getpid(), n);
            fd = open(rec.path, flags, 0644);
            if (fd < 0 && errno != EEXIST)
                break;
        }
    }
    if (fd < 0)
        return -1;
    /* a forked child's file takes the number the parent's had, which the
     * seccomp filter it inherited guards */
    int high = rec.fd >= 0 ? (int)raw_syscall3(SYS_dup3, fd, rec.fd, O_CLOEXEC)
                         : fcntl(fd, F_DUPFD_CLOEXEC, TRACE_FD_MIN);
    if (high >= 0) {
        close(fd);
        fd = high;
    }
    return fd;
}

/* The descriptor the writer learns of the process's end from: a forked
 * child's replaces its parent's (whose process it tells of), at its
 * number.  None: no writer (nothing else would tell it). */
static void open_watch(void)
{
    if (!rec.writer.wanted)
        return;
    int fd = hidden_task_watch(rec.watch_fd, TRACE_FD_MIN);
    if (fd < 0) {
        if (rec.watch_fd >= 0)
            raw_syscall3(SYS_close, rec.watch_fd, 0, 0);
        rec.writer.wanted = WRITER_NONE;
    }
    rec.watch_fd = fd < 0 ? -1 : fd;
}

static void open_output(void)
{
    rec.pid = getpid();
    rec.fd = create_output();
    if (rec.fd < 0) {
        static const char msg[] = "memtap: cannot create the trace file\n";
        raw_say_lit(msg);
        if (rec.status)
            atomic_fetch_add(&rec.status->no_file, 1);
        rec.enabled = 0;
        return;
    }
    open_watch();
    struct stat st;
    rec.file_ino = fstat(rec.fd, &st) == 0 ? (uint64_t)st.st_ino : 0;
    atomic_store(&rec.file_bytes, 0);
    rec.unfollowed = 0;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    rec.start_ns = raw_clock_ns(CLOCK_MONOTONIC);
    memtap_file_header h;
    trace_file_header_init(&h, (uint32_t)getpid(), (uint32_t)getppid(),
                           (uint64_t)ts.tv_sec * 1000000000u +
                               (uint64_t)ts.tv_nsec,
                           atomic_load(&rec.seq));
    write_chunk(&h, sizeof h, 0);
    if (rec.status)
        atomic_fetch_add(&rec.status->processes, 1);
    write_info_start();
    write_maps();
}

/* ---- per-thread buffers ---- */

static tracer_thread *thread_new(void)
{
    size_t bytes = (size_t)rec.cap * BYTES_PER_RECORD;
    size_t ws = trace_chunk_workspace_size(bytes, rec.compression);
    size_t out = trace_chunk_bound(bytes);
    size_t head = 64 * ((sizeof(tracer_thread) + 63) / 64);
    ws = 64 * ((ws + 63) / 64);
    out = 64 * ((out + 63) / 64); /* the buffers 64-byte aligned */
    size_t total = head + ws + out + bytes + HANDS * out;
    total = (total + 4095) & ~(size_t)4095;
    char *m = raw_map(total);
    if (!m)
        return NULL;
    tracer_thread *t = (tracer_thread *)(void *)m;
    t->map_size = total;
    t->cctx = trace_chunk_context(m + head, ws, rec.compression);
    t->out = m + head + ws;
    t->out_cap = out; /* (at least the bound) */
    t->buf = (uint8_t *)t->out + out; /* touched only as far as used */
    for (unsigned i = 0; i < HANDS; i++) /* (a chunk's bound each) */
        t->hands[i].buf = t->buf + bytes + i * out;
    t->buf_cap = bytes;
    if (!t->cctx) {
        raw_unmap(m, total);
        return NULL;
    }
    tracer_thread *first = atomic_load(&rec.threads);
    do {
        t->next = first;
    } while (!atomic_compare_exchange_weak(&rec.threads, &first, t));
    return t;
}

static tracer_thread *thread_claim(uint32_t tid)
{
    for (tracer_thread *t = atomic_load(&rec.threads); t; t = t->next) {
        uint32_t free_owner = 0;
        if (atomic_compare_exchange_strong(&t->owner, &free_owner, tid))
            return t;
    }
    tracer_thread *t = thread_new();
    if (t)
        atomic_store(&t->owner, tid);
    return t;
}

static void append(tracer_thread *t, uint8_t kind, uint8_t flags,
                   uint64_t pc, uint64_t addr, uint64_t size, uint64_t addr2,
                   uint64_t aux, uint32_t count);

static tracer_thread *self(void)
{
    tracer_thread *t = tls_self;
    if (t)
        return t;
    uint32_t tid = current_tid();
    t = thread_claim(tid);
    if (!t)
        return NULL;
    t->tid = tid;
    t->n = 0;
    t->len = 0;
    t->mark = 0;
    t->unmarked = 0;
    trace_packer_reset(&t->packer);
    tls_self = t;
    if (!tls_exited)
        append(t, MEMTAP_EV_THREAD_START, 0, 0,
               (uint64_t)pthread_self(), 0, 0, 0, 1);
    return t;
}

/* A chunk's time as its header holds it: microseconds since the output
 * opened, plus one, modulo 2^32 (0 is "not recorded"); taken when its
 * thread closes it (a handed-over buffer's was taken when the writer
 * wrote it, up to three chunks later).  The buffer's lock is held then,
 * and asynchronous signals wait for it (try_lock). */
static uint32_t chunk_time(void)
{
    uint32_t us = (uint32_t)((raw_clock_ns(CLOCK_MONOTONIC) - rec.start_ns) / 1000);
    return us + 1 ? us + 1 : 1;
}

/* Compresses n records of thread t packed in buf, closed at `time`
 * (chunk_time), as one event chunk into out; its length, 0 when it does not fit.  The rows
 * of tables its events may name are written first, if no other thread is
 * at them (here, before the chunk's write, which some callers make with
 * signals held: compressing the rows then could fault on a traced page of
 * the C library's). */
static size_t encode_events(ZSTD_CCtx *cctx, void *out, size_t out_cap,
                            tracer_thread *t, uint32_t tid, uint32_t n,
                            uint32_t time, const uint8_t *buf, size_t len)
{
    tables_before_events(0);
    size_t clen = trace_chunk_encode_stream(cctx, rec.compression, &t->stream,
                                            MEMTAP_CHUNK_PACKED, tid, n, buf,
                                            len, out, out_cap);
    if (clen)
        trace_chunk_set_time(out, time);
    return clen;
}

/* Writes the chunk of n records encode_events made (or loses them). */
static void put_events(const void *out, size_t clen, uint32_t n)
{
    if (clen == 0)
        lose(n, 0);
    else
        write_chunk(out, clen, n);
}

/* The chunk of hand h (of t): encoded when it was handed over, else
 * encoded now with cctx into out; its length (0: it could not be). */
static size_t hand_chunk(tracer_thread *t, tracer_hand *h, ZSTD_CCtx *cctx,
                         void *out, size_t out_cap, const void **chunk)
{
    *chunk = h->clen ? h->buf : out;
    return h->clen ? h->clen
                   : encode_events(cctx, out, out_cap, t, h->tid, h->n,
                                   h->time, h->buf, h->len);
}

static void futex_wake_all(_Atomic uint32_t *word)
{
    raw_syscall6(SYS_futex, (long)word, FUTEX_WAKE_PRIVATE, 0x7fffffff, 0, 0,
                 0);
}

/* Sleeps while *word is `value`, at most ns nanoseconds (0: no limit). */
static void futex_wait_for(_Atomic uint32_t *word, uint32_t value, long ns)
{
    struct timespec ts = { 0, ns };
    raw_syscall6(SYS_futex, (long)word, FUTEX_WAIT_PRIVATE, value,
                 ns ? (long)&ts : 0, 0, 0);
}

/* Sleeps while t's word (a hand's state) is `value`, at most a
 * millisecond, counted in t->waiters so that whoever changes the word
 * makes the wake system call only when someone sleeps (the writer made
 * one per chunk: 1,576 on the walk). */
static void wait_on(tracer_thread *t, _Atomic uint32_t *word, uint32_t value)
{
    atomic_fetch_add(&t->waiters, 1);
    futex_wait_for(word, value, 1000000);
    atomic_fetch_sub(&t->waiters, 1);
}

/* Wakes whoever sleeps on t's word (after the word changed). */
static void wake_on(tracer_thread *t, _Atomic uint32_t *word)
{
    if (atomic_load(&t->waiters))
        futex_wake_all(word);
}

/* Whether this is the writer and its program is gone: killed, or its
 * last thread ended without an exit (either way nothing stopped the
 * writer). */
static int writer_orphaned(void)
{
    return tls_writer && hidden_task_watched_ended(rec.watch_fd, rec.pid);
}

/* Writes t's hand number i when it is queued, compressed with cctx into
 * out (the writer's, the thread's or the metadata's); whether it did.  A
 * hand after the oldest is compressed at once and written in its turn,
 * after the ones before it, which others are writing. */
static int write_hand(tracer_thread *t, uint32_t i, ZSTD_CCtx *cctx,
                      void *out, size_t out_cap)
{
    uint32_t queued = HAND_QUEUED;
    tracer_hand *h = &t->hands[i % HANDS];
    if (!atomic_compare_exchange_strong(&h->state, &queued, HAND_WRITING))
        return 0;
    /* the head only moves under the slot's WRITING: a slot taken for a
     * hand already written holds a later one, which must wait its turn */
    uint32_t head = atomic_load(&t->hand_head);
    if (i - head >= HANDS) {
        atomic_store(&h->state, HAND_QUEUED);
        wake_on(t, &h->state);
        return 0;
    }
    tracer_hand *outer = tls_hand; /* (a flush-all's, interrupting one) */
    int outer_put = tls_hand_put;
    tls_hand = h;
    tls_hand_put = 0;
    const void *chunk;
    size_t clen = hand_chunk(t, h, cctx, out, out_cap, &chunk);
    while ((head = atomic_load(&t->hand_head)) != i) {
        if (writer_orphaned()) { /* the one before stays unwritten */
            lose(h->n, 0);
            return 1;
        }
        _Atomic uint32_t *before = &t->hands[head % HANDS].state;
        uint32_t now = atomic_load(before);
        if (now != HAND_FREE && atomic_load(&t->hand_head) == head)
            wait_on(t, before, now);
    }
    /* else a signal that ends the process, taken as the write returns,
     * writes the hand again (await_hands) */
    uint64_t mask = hold_signals();
    put_events(chunk, clen, h->n);
    tls_hand_put = 1;
    release_signals(mask);
    /* free before the head moves on: the holder refills the slot then */
    atomic_store(&h->state, HAND_FREE);
    atomic_store(&t->hand_head, i + 1);
    tls_hand = outer;
    tls_hand_put = outer_put;
    wake_on(t, &h->state);
    return 1;
}

/* Writes the buffers handed to the writer; whether there were any. */
static int writer_pass(void)
{
    int wrote = 0;
    for (tracer_thread *t = atomic_load(&rec.threads); t; t = t->next) {
        if (!write_hand(t, atomic_load(&t->hand_head), rec.writer.cctx,
                        rec.writer.out, rec.writer.out_cap))
            continue;
        atomic_fetch_add(&rec.writer.chunks, 1);
        wrote = 1;
    }
    return wrote;
}

/* Tells the writer there is work. */
static void writer_kick(void)
{
    atomic_fetch_add(&rec.writer.work, 1);
    if (atomic_load(&rec.writer.sleeping))
        futex_wake_all(&rec.writer.work);
}

/* The writer: writes every handed-over buffer, and sleeps when there is
 * none until a thread has two queued and wakes it (a system call on that
 * thread's side), or WRITER_WATCH_NS pass: a wake reaches the writer's
 * CPU by an interrupt, which on a virtual machine costs the waking thread
 * most (one per chunk, gzip -9 1.247 s of CPU; one per two, 1.198: 8
 * paired runs).  It napped 20 us at a time for 2 ms after its last
 * buffer before, to spare the program that call: the naps' context
 * switches cost more CPU than the wakes (the walk: 13,858 switches
 * against 2,724, and chunks of 65,536 records made wakes four times
 * rarer).  It returns (and its process ends) when told to stop, once
 * nothing is left to write, or when its program is gone: it holds the
 * program's descriptors (a pipe's reader waits for their end). */
static void writer_main(void *unused)
{
    (void)unused;
    /* all it does is memtap's (the compressor's memcpy calls, and its
     * accesses where the static engine rewrote libzstd: the clients are
     * told, so that they log none) */
    tracer_internal_enter();
    tls_writer = 1;
    /* its name (an orphan is born with it: hidden_task.c) */
    raw_syscall6(SYS_prctl, PR_SET_NAME, (long)WRITER_NAME, 0, 0, 0, 0);
    for (;;) {
        /* asked before the pass: one pass at least after the program's
         * end writes all it had handed over */
        int orphaned = writer_orphaned();
        if (orphaned) /* what memtap run waits for (run_wait.c) */
            raw_syscall6(SYS_prctl, PR_SET_NAME, (long)ENDING_NAME, 0, 0, 0, 0);
        uint32_t work = atomic_load(&rec.writer.work);
        if (writer_pass())
            continue;
        if (orphaned || atomic_load(&rec.writer.stop))
            return;
        /* a thread that hands over (or stops it) after this store wakes
         * the writer; one before it has bumped work, which the wait sees */
        atomic_store(&rec.writer.sleeping, 1);
        if (atomic_load(&rec.writer.work) == work)
            futex_wait_for(&rec.writer.work, work, WRITER_WATCH_NS);
        atomic_store(&rec.writer.sleeping, 0);
    }
}

/* Whether the writer may be an orphan (hidden_task.h): memtap run, the
 * run's subreaper, takes it in, while no traced process made itself one. */
static int writer_orphan(void)
{
    return rec.status && atomic_load(&rec.status->subreapers) == 0;
}

/* Whether full buffers go to the writer now; starts it on first use. */
static int writer_ready(void)
{
    if (!rec.writer.wanted || atomic_load(&rec.finished))
        return 0;
    int state = atomic_load(&rec.writer.started); /* 1 runs, -1 failed */
    if (state != 0)
        return state == 1;
    if (!atomic_compare_exchange_strong(&rec.writer.started, &state, 2))
        return 0; /* another thread is starting it */
    if (!rec.writer.cctx) {
        size_t bytes = (size_t)rec.cap * BYTES_PER_RECORD;
        size_t ws = trace_chunk_workspace_size(bytes, rec.compression);
        size_t out = trace_chunk_bound(bytes);
        char *m = raw_map(ws + out);
        rec.writer.cctx = m ? trace_chunk_context(m, ws, rec.compression) : NULL;
        rec.writer.out = m + ws;
        rec.writer.out_cap = out;
    }
    atomic_store(&rec.writer.stop, 0);
    long pid = rec.writer.cctx
                   ? hidden_process_start(writer_main, NULL, WRITER_NAME,
                                          writer_orphan(), &rec.writer.proc)
                   : -1;
    atomic_store(&rec.writer.started, pid > 0 ? 1 : -1);
    return pid > 0;
}

/* Ends the writer once the buffers handed to it are written, and reaps
 * it (its CPU time then counts as the program's children's); from the
 * process's end or an exec, after every buffer was flushed. */
static void writer_stop(void)
{
    if (atomic_load(&rec.writer.started) != 1)
        return;
    atomic_store(&rec.writer.stop, 1);
    writer_kick();
    hidden_process_reap(&rec.writer.proc);
    atomic_store(&rec.writer.started, 0);
}

/* Settles t's hands until `keep` are left, the oldest first: takes back
 * (and writes here) the oldest the writer has not begun, compressing it
 * while the writer compresses the one before (under MEMTAP_WRITER=all,
 * only waits); the caller holds t->lock. */
static void settle_hands(tracer_thread *t, uint32_t keep)
{
    int may_write = rec.writer.wanted != WRITER_ALL;
    for (;;) {
        uint32_t head = atomic_load(&t->hand_head);
        uint32_t tail = atomic_load(&t->hand_tail);
        if (tail - head <= keep)
            return;
        int took = 0;
        for (uint32_t i = head; may_write && !took && i != tail; i++)
            took = write_hand(t, i, t->cctx, t->out, t->out_cap);
        if (took)
            continue;
        _Atomic uint32_t *state = &t->hands[head % HANDS].state;
        uint32_t now = atomic_load(state);
        if (now == HAND_QUEUED) /* the writer may sleep on one (hand_over) */
            writer_kick();
        if (now != HAND_FREE && atomic_load(&t->hand_head) == head)
            wait_on(t, state, now);
    }
}

/* Copies len bytes to `to` (16-byte aligned) with stores that bypass
 * the caches, and orders them before what the caller stores next: the
 * writer reads them from memory, and the thread's next copy into the same
 * hand takes no cache line back from the writer's CPU (swapping buffers
 * with the hand instead, the thread packed into lines the writer had
 * read: gzip -9, 1.56 against 1.39 s of CPU). */
static void copy_streaming(uint8_t *to, const uint8_t *from, size_t len)
{
    size_t i = 0;
    for (; i + 64 <= len; i += 64)
        for (size_t k = i; k < i + 64; k += 16)
            _mm_stream_si128((__m128i *)(void *)(to + k),
                             _mm_loadu_si128((const __m128i *)(const void *)(from + k)));
    memcpy(to + i, from + i, len - i);
    _mm_sfence();
}

/* Hands t's full buffer to the writer: a copy in the free slot
 * settle_hands made, or, when it is to be stored as it is, the chunk
 * itself, encoded here while its bytes are in this CPU's caches (the
 * writer's copy and checksum of them, read from memory, took three times
 * the CPU: gzip -9 in perf, 66 against 22 ms). */
static void hand_over(tracer_thread *t, uint32_t time)
{
    uint32_t tail = atomic_load(&t->hand_tail);
    tracer_hand *h = &t->hands[tail % HANDS];
    h->time = time;
    h->clen = trace_stream_stores(rec.compression, &t->stream)
                  ? encode_events(t->cctx, h->buf, t->out_cap, t, t->tid,
                                  t->n, time, t->buf, t->len)
                  : 0;
    if (!h->clen)
        copy_streaming(h->buf, t->buf, t->len);
    h->tid = t->tid;
    h->n = t->n;
    h->len = t->len;
    atomic_store(&h->state, HAND_QUEUED);
    atomic_store(&t->hand_tail, tail + 1);
    if (tail + 1 - atomic_load(&t->hand_head) >= 2) /* (writer_main) */
        writer_kick();
    else
        atomic_fetch_add(&rec.writer.work, 1);
}

/* Writes t's buffer as one chunk closed at `time` (chunk_time; 0: now),
 * or hands it to the writer; the caller holds t->lock. */
static void close_chunk(tracer_thread *t, uint32_t time)
{
    if (t->n == 0)
        return;
    if (rec.fd < 0 && t->n < rec.cap && t->buf_cap - t->len >= TRACE_PACKED_MAX)
        return; /* before the output exists: keep while there is room */
    tracer_internal_enter(); /* zstd's memcpy calls are memtap's */
    time = time ? time : chunk_time();
    if (rec.fd < 0) {
        lose(t->n, 0);
    } else if (!tls_exited && writer_ready()) {
        settle_hands(t, HANDS - 1);
        hand_over(t, time);
    } else {
        settle_hands(t, 0);
        size_t clen = encode_events(t->cctx, t->out, t->out_cap, t, t->tid,
                                    t->n, time, t->buf, t->len);
        /* else a signal that ends the process, taken as the write
         * returns, counts the records written lost (tracer_flush_all) */
        uint64_t mask = hold_signals();
        put_events(t->out, clen, t->n);
        t->n = 0;
        release_signals(mask);
    }
    t->n = 0;
    t->len = 0;
    trace_packer_reset(&t->packer);
    tracer_internal_leave();
}

/* close_chunk of t's buffer now. */
static void flush_locked(tracer_thread *t)
{
    close_chunk(t, 0);
}

/* Notes that n records or entries are about to be put in t's buffer;
 * once in MARK_EVERY, the time (a system call).  When none were for
 * PAUSE_US or more (the thread slept, waited or was not run), the chunk
 * is closed at the time last noted, and an empty chunk closed now marks
 * the pause's end: a reader spreads a chunk's records over the time
 * since its thread's chunk before it closed, and neither the records
 * before the pause nor those after it are spread over the pause (a chunk
 * open across a 300 ms sleep spread up to 65,536 records over it before:
 * it.report_time_axis).  The caller holds t->lock. */
static void note_time(tracer_thread *t, uint32_t n)
{
    if ((t->unmarked += n) < MARK_EVERY && t->mark)
        return;
    t->unmarked = 0;
    uint32_t now = chunk_time();
    if (t->mark && now - t->mark >= PAUSE_US && rec.fd >= 0) {
        close_chunk(t, t->mark);
        settle_hands(t, 0); /* the mark after the thread's chunks */
        tracer_internal_enter();
        size_t clen = trace_chunk_encode(t->cctx, MEMTAP_CHUNK_PACKED, t->tid,
                                         0, t->buf, 0, t->out, t->out_cap);
        if (clen) {
            trace_chunk_set_time(t->out, now);
            uint64_t mask = hold_signals();
            write_chunk(t->out, clen, 0);
            release_signals(mask);
        }
        tracer_internal_leave();
    }
    t->mark = now;
}

/* Whether t's buffer has room for `records` more records in `bytes`. */
static int has_room(const tracer_thread *t, uint32_t records, size_t bytes)
{
    return t->n <= rec.cap && rec.cap - t->n >= records &&
           t->buf_cap - t->len >= bytes;
}

/* Whether t's buffer is to be written now: full, or the process ending. */
static void flush_if_due(tracer_thread *t)
{
    if (t->n >= rec.cap || atomic_load(&rec.finished) || tls_exited)
        flush_locked(t);
}

/* Who the calling thread is, as a buffer's lock remembers it (the address
 * of one of its thread-local variables: no system call). */
static uintptr_t lock_holder(void) { return (uintptr_t)&tls_self; }

/* A buffer's lock is a section asynchronous signals wait for
 * (defer.h): a program's handler that ran while its thread held its own
 * buffer (a Go program's, in the middle of a record) found the lock
 * held and lost its accesses' records (2 to 3 runs in 100 of fzf under the
 * fault engine). */
static int try_lock(tracer_thread *t)
{
    if (!spin_try(&t->lock))
        return 0;
    defer_enter();
    atomic_store_explicit(&t->holder, lock_holder(), memory_order_relaxed);
    return 1;
}

static void unlock(tracer_thread *t)
{
    atomic_store_explicit(&t->holder, 0, memory_order_relaxed);
    spin_release(&t->lock);
    defer_leave(); /* what came meanwhile is delivered now */
}

/* Takes t's lock, waiting while another thread holds it for a moment
 * (a thread writing every buffer as the process ends: a record lost to
 * it made runs of threaded programs incomplete now and then); 0 at once
 * when this thread holds it (a signal handler's record in the middle of
 * the thread's own), or after LOCK_PATIENCE_NS. */
#define LOCK_PATIENCE_NS 2000000
static int lock_waiting(tracer_thread *t)
{
    long long since = 0;
    while (!try_lock(t)) {
        if (atomic_load_explicit(&t->holder, memory_order_relaxed) ==
            lock_holder())
            return 0;
        long long now = raw_clock_ns(CLOCK_MONOTONIC);
        since = since ? since : now;
        if (now - since > LOCK_PATIENCE_NS)
            return 0;
        raw_syscall3(SYS_sched_yield, 0, 0, 0);
    }
    return 1;
}

static void append(tracer_thread *t, uint8_t kind, uint8_t flags,
                   uint64_t pc, uint64_t addr, uint64_t size, uint64_t addr2,
                   uint64_t aux, uint32_t count)
{
    if (!lock_waiting(t)) {
        lose(1, 0);
        return;
    }
    note_time(t, 1);
    if (!has_room(t, 1, TRACE_PACKED_MAX))
        flush_locked(t);
    if (has_room(t, 1, TRACE_PACKED_MAX)) {
        memtap_record r = {
            .seq = atomic_fetch_add(&rec.seq, 1), .pc = pc, .addr = addr,
            .size = size, .addr2 = addr2, .aux = aux, .kind = kind,
            .flags = flags, .count = count };
        t->len = (size_t)(trace_pack_record(&t->packer, &r, t->buf + t->len) -
                          t->buf);
        t->n++;
    } else {
        lose(1, 0);
    }
    flush_if_due(t);
    unlock(t);
}

static void record(uint8_t kind, uint8_t flags, uint64_t pc, uint64_t addr,
                 uint64_t size, uint64_t addr2, uint64_t aux, uint32_t count)
{
    if (!rec.enabled || clients_take(kind, pc, addr, size, addr2))
        return;
    tracer_internal_enter(); /* what libc does for us here is not the program's */
    tracer_thread *t = self();
    if (t)
        append(t, kind, flags, pc, addr, size, addr2, aux, count);
    else
        lose(1, 0);
    tracer_internal_leave();
}

void tracer_sync(void)
{
    if (rec.enabled)
        EACH_CLIENT(sync);
}

void tracer_record(uint8_t kind, uint8_t flags, uint64_t pc, uint64_t addr,
                 uint64_t size, uint64_t addr2, uint64_t aux)
{
    tracer_record_counted(kind, flags, pc, addr, size, addr2, aux, 1);
}

void tracer_record_counted(uint8_t kind, uint8_t flags, uint64_t pc,
                           uint64_t addr, uint64_t size, uint64_t addr2,
                           uint64_t aux, uint32_t count)
{
    if (filters_on() && !filters_keep(kind, addr, size, addr2))
        return;
    /* accesses a rewritten module logged come first */
    if (kind != MEMTAP_EV_LOAD && kind != MEMTAP_EV_STORE)
        EACH_CLIENT(sync);
    record(kind, flags, pc, addr, size, addr2, aux, count);
}

void tracer_record_accesses(const memtap_record *r, size_t n)
{
    for (size_t i = 0; i < n; i++) /* a shadow tool takes them one by one */
        record(r[i].kind, 0, r[i].pc, r[i].addr, r[i].size, 0, 0, r[i].count);
}

int tracer_add_sites(uint32_t tag, uint64_t bias, const memtap_site *sites,
                     uint32_t nsites, const uint8_t *frames,
                     size_t frames_len, const uint8_t *records)
{
    if (tag >= MAX_SITE_TABS || tag != atomic_load(&rec.nsite_tabs))
        return -1;
    rec.site_tabs[tag] = (trace_site_table){ bias, sites, nsites, NULL };
    rec.site_frames[tag].p = frames;
    rec.site_frames[tag].len = frames_len;
    /* a byte a site: what packing an entry looks up, in memtap's memory
     * (entries of a module drain after dlclose unmaps it): a copy of the
     * rewriter's when each is a count an entry can stand for (47 KB for
     * libc), else worked out from the sites (reading libc's 1.1 MB table
     * took a quarter of a millisecond) */
    uint8_t *own = nsites ? raw_map(nsites) : NULL;
    int copied = own && records;
    if (copied)
        memcpy(own, records, nsites);
    for (uint32_t i = 0; copied && i < nsites; i++)
        copied = own[i] <= TRACE_ENTRY_RECORDS_MAX;
    if (own && !copied) {
        trace_sites all = { rec.site_tabs, tag + 1 };
        trace_site_records_fill(&all, tag, own);
    }
    rec.site_tabs[tag].records = own;
    meta_acquire(1);
    int rc = write_sites_locked(tag);
    if (rc == 0)
        atomic_store(&rec.nsite_tabs, tag + 1);
    meta_release();
    if (rc && own)
        raw_unmap(own, nsites);
    return rc;
}

/* The records the entries keep keeps (NULL: all) stand for (what is
 * lost when they are). */
static uint64_t entry_records(const trace_entry *e, const trace_entry *end,
                              trace_keep *keep)
{
    trace_sites sites = { rec.site_tabs, atomic_load(&rec.nsite_tabs) };
    uint64_t n = 0;
    for (; e < end; e++) {
        const trace_site_table *tab;
        uint32_t index;
        if (!keep || trace_keep_test(keep, e->addr))
            n += trace_site_records(&sites, e->site, &tab, &index);
    }
    return n;
}

/* Packs the entries keep keeps (NULL: all) into t's buffer as access
 * runs; the caller holds t->lock. */
static void pack_entries_locked(tracer_thread *t, const trace_entry *e,
                                const trace_entry *end, trace_keep *keep)
{
    trace_sites sites = { rec.site_tabs, atomic_load(&rec.nsite_tabs) };
    /* a run may go past its limits to end where no follower's records
     * are still due: the buffer keeps the bytes for that */
    const size_t run_min = TRACE_RUN_FRAME + TRACE_ENTRY_MAX +
                           TRACE_RUN_OVER_BYTES;
    note_time(t, (uint32_t)(end - e));
    while (e < end) {
        if (!has_room(t, TRACE_ENTRY_RECORDS_MAX, run_min))
            flush_locked(t);
        if (!has_room(t, TRACE_ENTRY_RECORDS_MAX, run_min)) {
            /* no output yet: nowhere to go */
            lose(entry_records(e, end, keep), 0);
            break;
        }
        uint32_t records = 0;
        uint8_t *at = t->buf + t->len;
        uint8_t *o = trace_run_pack_kept(
            &t->packer, &sites, &e, end, at,
            t->buf + t->buf_cap - TRACE_RUN_OVER_BYTES, rec.cap - t->n,
            &records, keep);
        if (o == at)
            continue; /* nothing left that names a site, or is kept */
        trace_run_seal(&t->packer, at, atomic_fetch_add(&rec.seq, records),
                       records);
        t->len = (size_t)(o - t->buf);
        t->n += records;
    }
    flush_if_due(t);
}

int tracer_append_entries(const trace_entry *e, const trace_entry *end,
                          trace_keep *keep)
{
    if (!rec.enabled || e == end) /* (no thread is claimed for none) */
        return 1;
    if (clients_active())
        return 0;
    tracer_internal_enter();
    tracer_thread *t = self();
    if (t && lock_waiting(t)) {
        pack_entries_locked(t, e, end, keep);
        unlock(t);
    } else {
        lose(entry_records(e, end, keep), 0); /* its buffer busy */
    }
    tracer_internal_leave();
    return 1;
}

/* The hands of t, whose owner is busy (it may be the code this call
 * interrupted): a chunk the writer has not begun is written here (with
 * the metadata context), one it is writing is waited for, up to ten
 * seconds in all; what does not make it is counted lost. */
static void await_hands(tracer_thread *t)
{
    for (int ms = 0; ms < 10000; ms++) {
        uint32_t head = atomic_load(&t->hand_head);
        if (atomic_load(&t->hand_tail) == head)
            return;
        tracer_hand *h = &t->hands[head % HANDS];
        uint32_t now = atomic_load(&h->state);
        if (now == HAND_QUEUED && meta_acquire(0)) {
            write_hand(t, head, rec.meta_cctx, rec.meta_out, rec.meta_out_cap);
            meta_release();
            continue;
        }
        if (now == HAND_WRITING && tls_hand == h) {
            /* this thread's own, in the code this call interrupted, which
             * will not go on: its bytes are whole, write it here */
            if (!tls_hand_put && meta_acquire(0)) {
                const void *chunk;
                size_t clen = hand_chunk(t, h, rec.meta_cctx, rec.meta_out,
                                         rec.meta_out_cap, &chunk);
                put_events(chunk, clen, h->n);
                meta_release();
            } else if (!tls_hand_put) {
                lose(h->n, 0);
            }
            atomic_store(&h->state, HAND_FREE);
            atomic_store(&t->hand_head, head + 1);
            tls_hand = NULL;
            continue;
        }
        if (now != HAND_FREE)
            wait_on(t, &h->state, now);
    }
    uint32_t tail = atomic_load(&t->hand_tail);
    for (uint32_t i = atomic_load(&t->hand_head); i != tail; i++)
        if (atomic_load(&t->hands[i % HANDS].state) != HAND_FREE)
            lose(t->hands[i % HANDS].n, 0); /* (free: written) */
}

void tracer_flush_all(void)
{
    tracer_internal_enter(); /* zstd's memcpy calls are memtap's */
    tables_before_events(1);
    tracer_internal_leave();
    for (tracer_thread *t = atomic_load(&rec.threads); t; t = t->next) {
        if (try_lock(t)) {
            tracer_internal_enter();
            settle_hands(t, 0);
            tracer_internal_leave();
            flush_locked(t);
            unlock(t);
        } else {
            await_hands(t);
            if (t == tls_self)
                lose(t->n, 0); /* its buffer, mid-change under us */
        }
    }
}

void tracer_thread_exit(void)
{
    tracer_thread *t = tls_self;
    if (!t || !rec.enabled)
        return;
    EACH_CLIENT(thread_exit);
    /* From here on this thread's chunks are written in place, none handed
     * to the writer: what the C library records after this (its thread
     * cache freed) goes into another buffer, whose chunks must not
     * overtake this one's at the writer. */
    tls_exited = 1;
    append(t, MEMTAP_EV_THREAD_EXIT, 0, 0, 0, 0, 0, 0, 1);
    if (try_lock(t)) {
        flush_locked(t);
        unlock(t);
    }
    tls_self = NULL;
    atomic_store(&t->owner, 0);
}

void tracer_note_untraced_exec(void)
{
    if (rec.status)
        atomic_fetch_add(&rec.status->untraced_execs, 1);
}

void tracer_note_subreaper(void)
{
    if (rec.status)
        atomic_fetch_add(&rec.status->subreapers, 1);
}

void tracer_note_fault_pc(uint64_t pc)
{
    uint64_t none = 0;
    atomic_compare_exchange_strong(&rec.fault_pc, &none, pc);
}

void tracer_finish(const char *how, int code)
{
    /* a vfork child shares our memory until it execs or exits: the output
     * and the buffers stay the parent's */
    if (!rec.enabled || !tracer_owns_process())
        return;
    if (atomic_exchange(&rec.finished, 1))
        return;
    EACH_CLIENT(finish);
    tracer_flush_all();
    writer_stop();
    char text[512];
    fmt_buf b = { text, 0, sizeof text };
    fmt_str(&b, "end=");
    fmt_str(&b, how);
    fmt_str(&b, "\nend_code=");
    fmt_u64(&b, (uint64_t)(uint32_t)code);
    fmt_str(&b, "\nend_seq=");
    fmt_u64(&b, atomic_load(&rec.seq));
    fmt_str(&b, "\ndropped=");
    fmt_u64(&b, atomic_load(&rec.dropped));
    if (atomic_load(&rec.writer.chunks)) {
        fmt_str(&b, "\nwriter_chunks=");
        fmt_u64(&b, atomic_load(&rec.writer.chunks));
    }
    if (atomic_load(&rec.follow_waits)) {
        fmt_str(&b, "\nfollow_waits=");
        fmt_u64(&b, atomic_load(&rec.follow_waits));
    }
    if (atomic_load(&rec.fault_pc)) {
        fmt_str(&b, "\nend_pc=");
        fmt_hex(&b, atomic_load(&rec.fault_pc));
    }
    if (atomic_load(&rec.write_errno)) {
        fmt_str(&b, "\nwrite_errno=");
        fmt_u64(&b, (uint64_t)atomic_load(&rec.write_errno));
    }
    fmt_char(&b, '\n');
    EACH_CLIENT(end_stats, &b);
    /* a signal may have interrupted a metadata write: then skip the note */
    if (meta_acquire(0)) {
        write_meta_locked(MEMTAP_CHUNK_INFO, 0, text, b.len);
        meta_release();
    }
}

int tracer_owns_process(void)
{
    return raw_syscall3(SYS_getpid, 0, 0, 0) == rec.pid;
}

void tracer_exec_failed(void)
{
    if (rec.enabled && tracer_owns_process())
        atomic_store(&rec.finished, 0);
}

void tracer_after_fork_child(void)
{
    if (!rec.enabled)
        return;
    tracer_internal_enter(); /* what libc does for memtap is its own */
    uint32_t tid = current_tid();
    for (tracer_thread *t = atomic_load(&rec.threads); t; t = t->next) {
        atomic_store(&t->lock, 0);
        for (unsigned j = 0; j < HANDS; j++) /* the parent's to write */
            atomic_store(&t->hands[j].state, HAND_FREE);
        atomic_store(&t->hand_head, 0);
        atomic_store(&t->hand_tail, 0);
        atomic_store(&t->waiters, 0);
        t->n = 0; /* the parent's records are the parent's to write */
        t->len = 0;
        t->mark = 0;
        t->unmarked = 0;
        trace_packer_reset(&t->packer);
        atomic_store(&t->owner, t == tls_self ? tid : 0);
    }
    if (tls_self)
        tls_self->tid = tid;
    atomic_store(&rec.meta_lock, 0);
    atomic_store(&rec.finished, 0);
    atomic_store(&rec.dropped, 0);
    atomic_store(&rec.writer.started, 0); /* the writer is the parent's */
    hidden_process_forget(&rec.writer.proc);
    atomic_store(&rec.writer.sleeping, 0);
    atomic_store(&rec.writer.chunks, 0);
    atomic_store(&rec.write_errno, 0);
    EACH_CLIENT(after_fork_child);
    stacks_after_fork_child();
    tables_after_fork_child();
    strcpy(rec.parent_path, rec.path);
    rec.fork_seq = atomic_load(&rec.seq);
    open_output();
    write_all_sites();
    if (tls_self)
        append(tls_self, MEMTAP_EV_THREAD_START, 0, 0,
               (uint64_t)pthread_self(), 0, 0, 0, 1);
    tracer_internal_leave();
}

void tracer_init(void)
{
    const preload_config *c = config();
    if (!*c->output || strlen(c->output) >= sizeof rec.base_path - 32)
        return;
    strcpy(rec.base_path, c->output);
    map_status();
    rec.cap = c->buffer_records ? c->buffer_records : DEFAULT_RECORDS;
    rec.meta_out_cap = trace_chunk_bound(META_MAX);
    if (strcmp(c->compress, "fast") == 0)
        rec.compression = TRACE_FAST;
    else if (strcmp(c->compress, "small") == 0)
        rec.compression = TRACE_SMALL;
    if (strcmp(c->writer, "all") == 0)
        rec.writer.wanted = WRITER_ALL;
    else if (strcmp(c->writer, "mix") == 0)
        rec.writer.wanted = WRITER_SHARED;
    else if (strcmp(c->writer, "off") == 0)
        rec.writer.wanted = WRITER_NONE;
    else
        rec.writer.wanted = hidden_task_cpus() > 1 ? WRITER_SHARED
                                                   : WRITER_NONE;
    if (rec.writer.wanted && hidden_task_prepare() != 0)
        rec.writer.wanted = 0;
    size_t ws = trace_chunk_workspace_size(META_MAX, rec.compression);
    void *mem = raw_map(ws + rec.meta_out_cap);
    if (!mem)
        return;
    rec.meta_cctx = trace_chunk_context(mem, ws, rec.compression);
    rec.meta_out = (char *)mem + ws;
    rec.enabled = 1;
    open_output();
}
