/*
 * stop_world.c - stop-the-world for the fault engine.
 *
 * The stopper takes the world lock, makes the generation odd ("stopped"),
 * signals each other registered thread with PARK_SIGNAL and waits until
 * each has recorded that generation in its slot (or has gone).  A parked
 * thread waits on the generation with futex until it turns even again.
 * A thread that is itself waiting for the world lock (its handler blocks
 * PARK_SIGNAL) parks in the lock loop instead.  A thread that does not
 * park within WAIT_NS (one waiting in vfork for its child, say) makes that
 * stop inexact (its window counted as exposed) and is late: the stops after
 * wait for it GRACE_NS only, and after each miss skip it for twice as many
 * stops as before (at most MAX_SKIP), until it parks in time again; so one
 * that never parks costs little, and one that was only held up is waited
 * for again.  Past SLOTS threads stopping is given up for the run.
 */
#define _GNU_SOURCE
#include "stop_world.h"
#include "own_signals.h"
#include "sys/own_flags.h"
#include "sys/rawsys.h"
#include "sys/sigbits.h"

#include "defer.h"
#include "own_text.h"

#include <linux/futex.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>

/* a constant: SIGRTMAX calls into the C library, whose data is traced */
#define PARK_SIGNAL (__SIGRTMAX - 1)
#define SLOTS 4096
/* long enough for a runnable thread on a loaded machine (two cores, a
 * test suite running two at a time); a late one is waited for GRACE_NS */
#define WAIT_NS 2000000000ll
#define GRACE_NS 200000ll
#define MAX_SKIP 1024u

typedef struct slot {
    _Atomic int tid;
    _Atomic uint32_t parked_gen;
    _Atomic int waiting; /* in a system call of memtap's making: as parked */
    uint32_t late;   /* stops it missed in a row (the stopper's, locked) */
    uint32_t skip;   /* stops left that do not wait for it */
} slot;

static struct {
    int enabled;
    int unreliable;            /* more threads than slots */
    int exact;                 /* the current stop parked every thread */
    slot *slots;
    atomic_int live;
    atomic_int pending;        /* threads created, not yet registered */
    atomic_int lock;
    _Atomic uint32_t gen;      /* odd while stopped */
    int depth;                 /* nesting of the stopper */
    int stopper;
} world_state;

static __thread slot *tls_slot __attribute__((tls_model("initial-exec")));
/* This thread was announced by world_thread_created() (it counts as
 * pending until it registers). */
static __thread int tls_created __attribute__((tls_model("initial-exec")));

extern int __sigaction(int, const struct sigaction *, struct sigaction *);

static int my_tid(void) { return (int)raw_syscall3(SYS_gettid, 0, 0, 0); }

static void futex_wait(_Atomic uint32_t *addr, uint32_t val)
{
    struct timespec ts = { 0, 10000000 }; /* re-check every 10 ms */
    raw_syscall6(SYS_futex, (long)addr, FUTEX_WAIT_PRIVATE, val, (long)&ts,
                 0, 0);
}

static void park(uint32_t gen)
{
    if (tls_slot)
        atomic_store(&tls_slot->parked_gen, gen);
    while (atomic_load(&world_state.gen) == gen)
        futex_wait(&world_state.gen, gen);
}

static void on_park(int sig, siginfo_t *si, void *uc)
{
    own_flags();
    if (defer_signal(sig, si, uc))
        return;
    uint32_t gen = atomic_load(&world_state.gen);
    if ((gen & 1) && world_state.stopper != my_tid())
        park(gen);
}

int world_init(void)
{
    world_state.slots = raw_map(SLOTS * sizeof *world_state.slots);
    if (!world_state.slots)
        return -1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_park;
    sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    sigbits_async(&sa.sa_mask);
    if (__sigaction(PARK_SIGNAL, &sa, NULL) != 0)
        return -1;
    own_signals_claim(PARK_SIGNAL);
    world_state.enabled = 1;
    world_thread_begin();
    return 0;
}

void world_thread_begin(void)
{
    if (!world_state.enabled || tls_slot)
        return;
    int tid = my_tid();
    for (int i = 0; i < SLOTS; i++) {
        int free_tid = 0;
        if (atomic_compare_exchange_strong(&world_state.slots[i].tid, &free_tid, tid)) {
            atomic_store(&world_state.slots[i].parked_gen, 0);
            atomic_store(&world_state.slots[i].waiting, 0);
            world_state.slots[i].late = world_state.slots[i].skip = 0;
            tls_slot = &world_state.slots[i];
            atomic_fetch_add(&world_state.live, 1);
            if (tls_created)
                atomic_fetch_sub(&world_state.pending, 1);
            tls_created = 0;
            /* a stopper that looked at the slots before this one was taken
             * neither signals nor waits for this thread: park before the
             * program's code runs */
            uint32_t gen = atomic_load(&world_state.gen);
            if ((gen & 1) && world_state.stopper != tid)
                park(gen);
            return;
        }
    }
    world_state.unreliable = 1; /* more threads than slots: count instead */
}

void world_thread_created(int delta)
{
    if (world_state.enabled)
        atomic_fetch_add(&world_state.pending, delta);
}

void world_thread_announced(void) { tls_created = 1; }

void world_thread_end(void)
{
    if (!tls_slot)
        return;
    atomic_store(&tls_slot->tid, 0);
    tls_slot = NULL;
    atomic_fetch_sub(&world_state.live, 1);
}

void world_after_fork(void)
{
    if (!world_state.enabled)
        return;
    for (int i = 0; i < SLOTS; i++)
        if (&world_state.slots[i] != tls_slot)
            atomic_store(&world_state.slots[i].tid, 0);
    atomic_store(&world_state.live, tls_slot ? 1 : 0);
    atomic_store(&world_state.pending, 0);
    atomic_store(&world_state.lock, 0);
    atomic_store(&world_state.gen, 0);
    world_state.depth = 0;
    world_state.stopper = 0;
    /* the forked child's only thread has a new tid */
    if (tls_slot)
        atomic_store(&tls_slot->tid, my_tid());
}

int world_shared(void)
{
    return world_state.enabled &&
           atomic_load(&world_state.live) + atomic_load(&world_state.pending) > 1;
}

int world_others_registered(void)
{
    return world_state.enabled && atomic_load(&world_state.live) > 1;
}

/* Waits for slot s's thread to park in generation gen (see the head of
 * the file for a late one); whether it did. */
static int wait_parked(slot *s, int me, uint32_t gen, long long deadline)
{
    if (s->late && s->skip) {
        s->skip--;
        return 0;
    }
    if (s->late)
        deadline = raw_clock_ns(CLOCK_MONOTONIC) + GRACE_NS;
    for (;;) {
        int tid = atomic_load(&s->tid);
        if (!tid || tid == me || atomic_load(&s->parked_gen) == gen ||
            atomic_load(&s->waiting)) {
            if (s->late)
                s->late = 0;
            return 1;
        }
        if (raw_clock_ns(CLOCK_MONOTONIC) > deadline)
            break;
        raw_syscall3(SYS_sched_yield, 0, 0, 0);
    }
    s->late++;
    s->skip = s->late < 11 ? 1u << s->late : MAX_SKIP;
    return 0;
}

int world_stop(void)
{
    if (!world_shared())
        return 1;
    int me = my_tid();
    if (world_state.stopper == me) {
        world_state.depth++;
        return world_state.exact;
    }
    if (world_state.unreliable)
        return 0;
    for (;;) {
        int expected = 0;
        if (atomic_compare_exchange_strong(&world_state.lock, &expected, 1))
            break;
        /* someone else is stopping the world: be stopped */
        uint32_t gen = atomic_load(&world_state.gen);
        if (gen & 1)
            park(gen);
        else
            raw_syscall3(SYS_sched_yield, 0, 0, 0);
    }
    world_state.stopper = me;
    world_state.depth = 1;
    uint32_t gen = atomic_fetch_add(&world_state.gen, 1) + 1; /* odd: stopped */
    long pid = raw_syscall3(SYS_getpid, 0, 0, 0);
    for (int i = 0; i < SLOTS; i++) {
        int tid = atomic_load(&world_state.slots[i].tid);
        /* not one waiting in a call: it would end the call early (a
         * sleep's EINTR) for nothing */
        if (tid && tid != me && !atomic_load(&world_state.slots[i].waiting))
            raw_syscall3(SYS_tgkill, pid, tid, PARK_SIGNAL);
    }
    long long deadline = raw_clock_ns(CLOCK_MONOTONIC) + WAIT_NS;
    world_state.exact = 1;
    for (int i = 0; i < SLOTS; i++)
        world_state.exact &= wait_parked(&world_state.slots[i], me, gen, deadline);
    return world_state.exact;
}

void world_wait_begin(void)
{
    if (tls_slot)
        atomic_store(&tls_slot->waiting, 1);
}

void world_wait_end(void)
{
    if (!tls_slot)
        return;
    atomic_store(&tls_slot->waiting, 0);
    /* a stop that counted this thread as parked while it waited */
    uint32_t gen = atomic_load(&world_state.gen);
    if ((gen & 1) && world_state.stopper != my_tid())
        park(gen);
}

int world_release(void)
{
    if (!world_state.enabled || world_state.stopper != my_tid())
        return 0;
    int depth = world_state.depth;
    world_state.depth = 1;
    world_resume();
    return depth;
}

void world_reacquire(int depth)
{
    if (depth <= 0)
        return;
    world_stop();
    if (world_state.stopper == my_tid())
        world_state.depth = depth;
}

void world_resume(void)
{
    if (!world_state.enabled || world_state.stopper != my_tid())
        return;
    if (--world_state.depth > 0)
        return;
    world_state.stopper = 0;
    atomic_fetch_add(&world_state.gen, 1); /* even: running */
    raw_syscall6(SYS_futex, (long)&world_state.gen, FUTEX_WAKE_PRIVATE, 0x7fffffff, 0,
                 0, 0);
    atomic_store(&world_state.lock, 0);
}
