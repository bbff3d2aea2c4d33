/*
 * traced_set.c - the fault engine's traced set: which pages it protects
 * (the page map holds each page's kind and the program's own rights), and
 * the open count of each page memtap has given its rights back for a
 * while (its own work on the program's behalf, a block operation, a
 * stepped instruction).  A page is closed again when its last opener
 * closes it.  One lock guards the counts and every mprotect of a traced
 * page; it is never held where a signal could park or re-enter the thread.
 *
 * One file: every change of a traced page's mapping or rights (opening,
 * closing, protecting, an alias made, moved, forgotten or made private
 * before a fork) is one of this lock's changes, which completions wait
 * for.
 */
#define _GNU_SOURCE
#include "traced_set.h"
#include "sys/sigbits.h"

#include "alias.h"
#include "preload/core/stop_world.h"
#include "pagemap.h"
#include "preload/record/tracer.h"
#include "sys/futex_lock.h"
#include "sys/hash.h"
#include "sys/page.h"
#include "sys/rawsys.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#define OPEN_SLOTS 4096

static struct {
    int tracking;        /* the traced set is kept, nothing protected (the
                            static engine filters with it) */
    int protecting;      /* its pages are protected: the fault engine */
    const traced_map_listener *listener;
    atomic_int active;
    atomic_int lock;
    struct { uintptr_t page; uint32_t count; } open[OPEN_SLOTS];
    /* Completions in flight, and a change of rights waiting for them: a
     * completion reads and writes memory behind the program's back, so no
     * page may open (the program's own accesses would race with it) or
     * close (one run on the page itself would fault) meanwhile. */
    atomic_int inflight;
    atomic_int changing;
    int change_depth;   /* nesting of change_begin (lock held) */
    atomic_int unmapping; /* traced_unmap calls in progress */
} set_state;

/* Depth of the masked handlers the calling thread is in. */
static __thread int tls_masked __attribute__((tls_model("initial-exec")));
/* The calling thread's completions in flight (between begin and end):
 * a change it makes itself meanwhile (memtap's own code, recording the
 * access it has made, touching a traced page) does not wait for it. */
static __thread int tls_inflight __attribute__((tls_model("initial-exec")));

int traced_active(void) { return atomic_load(&set_state.active); }
int traced_masked(void) { return tls_masked; }
void traced_set_masked(int depth) { tls_masked = depth; }
void traced_protect_pages(void) { set_state.protecting = 1; }
void traced_set_listener(const traced_map_listener *l) { set_state.listener = l; }

/* Brackets a change of rights or of the open counts (lock held): it
 * begins once no completion is in flight, and none starts until it ends,
 * so a completion sees counts and rights that agree. */
static void change_begin(void)
{
    if (set_state.change_depth++)
        return;
    atomic_store(&set_state.changing, 1);
    while (atomic_load(&set_state.inflight) > tls_inflight)
        raw_syscall3(SYS_sched_yield, 0, 0, 0);
}

static void change_end(void)
{
    if (--set_state.change_depth == 0)
        atomic_store(&set_state.changing, 0);
}

static void set_prot(uintptr_t page, size_t len, int prot)
{
    change_begin();
    raw_syscall3(SYS_mprotect, page, len, prot);
    change_end();
}

/* ---- page open counts ---- */

void traced_lock(void) { futex_lock(&set_state.lock); }
void traced_unlock(void) { futex_unlock(&set_state.lock); }

static size_t slot_of(uintptr_t page)
{
    size_t h = (size_t)(fib_mix(page >> PAGE_SHIFT) % OPEN_SLOTS);
    while (set_state.open[h].page && set_state.open[h].page != page)
        h = (h + 1) % OPEN_SLOTS;
    return h;
}

/* Opens one tracked page for the calling context (lock held). */
static void page_open_locked(uintptr_t page)
{
    change_begin();
    size_t h = slot_of(page);
    if (set_state.open[h].count++ == 0) {
        set_state.open[h].page = page;
        uint8_t st = pagemap_get(page);
        set_prot(page, PAGE, st & PM_PROT_MASK);
    }
    change_end();
}

/* traced_page_close_locked's work, inside a change. */
static void page_close_changing(uintptr_t page)
{
    size_t h = slot_of(page);
    if (set_state.open[h].page != page || set_state.open[h].count == 0)
        return;
    if (--set_state.open[h].count)
        return;
    if (atomic_load(&set_state.active) && (pagemap_get(page) & PM_TRACKED))
        set_prot(page, PAGE, PROT_NONE);
    /* backward-shift deletion keeps probe chains intact */
    size_t i = h;
    set_state.open[i].page = 0;
    for (size_t j = (i + 1) % OPEN_SLOTS; set_state.open[j].page;
         j = (j + 1) % OPEN_SLOTS) {
        size_t home = (size_t)(fib_mix(set_state.open[j].page >> PAGE_SHIFT) %
                               OPEN_SLOTS);
        if ((j > i && (home <= i || home > j)) ||
            (j < i && home <= i && home > j)) {
            set_state.open[i] = set_state.open[j];
            set_state.open[j].page = 0;
            set_state.open[j].count = 0;
            i = j;
        }
    }
}

void traced_page_close_locked(uintptr_t page)
{
    change_begin();
    page_close_changing(page);
    change_end();
}

static int page_is_open(uintptr_t page)
{
    size_t h = slot_of(page);
    return set_state.open[h].page == page && set_state.open[h].count;
}

/* Whether an access may touch the page itself: it is open, memtap keeps
 * no rights of it, or none at all (the engine lifted its protection: the
 * other threads touch the page themselves, so a locked instruction must
 * too).  Otherwise it is read and written through /proc/self/mem. */
static int page_direct(uintptr_t page)
{
    return !atomic_load(&set_state.active) || page_is_open(page) ||
           !(pagemap_get(page) & PM_TRACKED);
}

/* Counts the calling thread's completion in flight once no change is
 * being made; with `guard`, its asynchronous signals held off (saved in
 * *old) while it is, not while it waits. */
static void inflight_enter(int guard, sigset_t *old)
{
    for (;;) {
        while (atomic_load(&set_state.changing)) /* its changer needs the CPU */
            raw_syscall3(SYS_sched_yield, 0, 0, 0);
        if (guard)
            traced_guard_signals(old);
        atomic_fetch_add(&set_state.inflight, 1);
        if (!atomic_load(&set_state.changing))
            break;
        atomic_fetch_sub(&set_state.inflight, 1);
        if (guard)
            traced_unguard_signals(old);
    }
    tls_inflight++;
}

int traced_completion_begin(uintptr_t a, size_t n)
{
    inflight_enter(0, NULL);
    /* no rights change now: the counts hold still for us to read */
    int direct = 0, pages = 0;
    for (uintptr_t p = page_start(a); p < a + n; p += PAGE, pages++)
        direct += page_direct(p);
    return direct == 0 ? 0 : direct == pages ? 1 : -1;
}

void traced_completion_end(void)
{
    tls_inflight--;
    atomic_fetch_sub(&set_state.inflight, 1);
}

int traced_reach_begin(sigset_t *old)
{
    int guard = !traced_masked();
    inflight_enter(guard, old);
    return guard;
}

void traced_reach_end(int guard, const sigset_t *old)
{
    traced_completion_end();
    if (guard)
        traced_unguard_signals(old);
}


/* Holds off every asynchronous signal (a program handler, the park signal)
 * around the page lock; faults and traps stay deliverable. */
void traced_guard_signals(sigset_t *old)
{
    sigset_t async;
    sigbits_async(&async);
    raw_syscall6(SYS_rt_sigprocmask, SIG_BLOCK, (long)&async, (long)old, 8,
                 0, 0);
}

void traced_unguard_signals(const sigset_t *old)
{
    raw_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)old, 0, 8, 0, 0);
}

/* The page lock is never held where a signal could park or re-enter the
 * thread: outside the masked handlers, signals are blocked around it. */
int traced_lock_guarded(sigset_t *old)
{
    int guard = !traced_masked();
    if (guard)
        traced_guard_signals(old);
    traced_lock();
    return guard;
}

void traced_unlock_guarded(int guard, const sigset_t *old)
{
    traced_unlock();
    if (guard)
        traced_unguard_signals(old);
}

/* Whether a page's state is that of a traced page the program itself
 * made inaccessible (its own rights none: a guard page). */
static int refused_state(uint8_t st)
{
    return (st & PM_TRACKED) && !(st & PM_PROT_MASK);
}

void traced_pages_add(traced_open_set *s, uintptr_t addr, size_t len)
{
    if (len == 0)
        return;
    for (uintptr_t p = page_start(addr); p < addr + len && !s->overflow;
         p += PAGE) {
        uint8_t st = pagemap_get(p);
        if (!(st & PM_TRACKED) || refused_state(st))
            continue; /* (opened, a page the program made inaccessible
                         stays so: nothing to open) */
        int seen = 0;
        for (int i = 0; i < s->n && !seen; i++)
            seen = s->pages[i] == p;
        if (seen)
            continue;
        if (s->n == (int)(sizeof s->pages / sizeof *s->pages)) {
            s->overflow = 1;
            break;
        }
        s->pages[s->n++] = p;
    }
}

void traced_pages_open_locked(traced_open_set *s, int from)
{
    for (int i = from; i < s->n; i++)
        page_open_locked(s->pages[i]);
}

/* Large ranges: open every tracked page of [addr, addr+len) as one run. */
static void open_range_locked(uintptr_t addr, size_t len, int open)
{
    for (uintptr_t p = page_start(addr); p < addr + len; p += PAGE)
        if (pagemap_get(p) & PM_TRACKED) {
            if (open)
                page_open_locked(p);
            else
                traced_page_close_locked(p);
        }
}

void traced_open(traced_open_set *s, uintptr_t addr, size_t len)
{
    s->n = 0;
    s->overflow = 0;
    if (!atomic_load(&set_state.active) || len == 0)
        return;
    traced_pages_add(s, addr, len);
    if (s->n == 0 && !s->overflow)
        return;
    sigset_t old;
    traced_guard_signals(&old);
    traced_lock();
    if (s->overflow) {
        /* remember the range itself in the first two slots */
        s->pages[0] = addr;
        s->pages[1] = len;
        open_range_locked(addr, len, 1);
    } else {
        traced_pages_open_locked(s, 0);
    }
    traced_unlock();
    traced_unguard_signals(&old);
}

void traced_close(traced_open_set *s)
{
    if (s->n == 0 && !s->overflow)
        return;
    sigset_t old;
    traced_guard_signals(&old);
    traced_lock();
    if (s->overflow)
        open_range_locked(s->pages[0], s->pages[1], 0);
    else
        for (int i = 0; i < s->n; i++)
            traced_page_close_locked(s->pages[i]);
    traced_unlock();
    traced_unguard_signals(&old);
    s->n = 0;
    s->overflow = 0;
}

int traced_has(uintptr_t addr, size_t len)
{
    for (uintptr_t p = page_start(addr); p < addr + (len ? len : 1);
         p += PAGE)
        if (pagemap_get(p) & PM_TRACKED)
            return 1;
    return 0;
}

/* ---- the traced set ---- */

int traced_refused(uintptr_t a, size_t n)
{
    for (uintptr_t p = page_start(a); n && p < a + n; p += PAGE)
        if (refused_state(pagemap_get(p)))
            return 1;
    return 0;
}

int traced_allows(uintptr_t a, size_t n, int write)
{
    for (uintptr_t p = page_start(a); p < a + n; p += PAGE) {
        uint8_t st = pagemap_get(p);
        if (!(st & PM_TRACKED) || !(st & PROT_READ) ||
            (write && !(st & PROT_WRITE)))
            return 0;
    }
    return 1;
}

int traced_kept(void) { return set_state.protecting || set_state.tracking; }

int traced_init(void)
{
    if (pagemap_init() != 0)
        return -1;
    set_state.tracking = 1;
    return 0;
}

uint8_t traced_region(uintptr_t addr)
{
    return (uint8_t)(pagemap_get(addr) & PM_REGION_MASK);
}

/* 32768 pages each side (the page map's leaf: 128 MiB): a scan of 32
 * KiB of it at most, eight pages a step */
#define REGION_REACH 32768
uint8_t traced_region_span(uintptr_t addr, uintptr_t *lo, uintptr_t *hi)
{
    return (uint8_t)(pagemap_span(addr, PM_REGION_MASK, REGION_REACH, lo, hi) &
                     PM_REGION_MASK);
}

uint64_t traced_regions_generation(void) { return pagemap_generation(); }

void traced_add(uintptr_t start, uintptr_t end, int prot, int region)
{
    if (!traced_kept() || end <= start || !(prot & PROT_READ))
        return;
    uint8_t state = (uint8_t)(PM_TRACKED | (region & (PM_REGION_MASK | PM_SHARED)) |
                              (prot & 7));
    uintptr_t p = page_start(start);
    /* already traced, the common case: unless an unmapping may be about
     * to clear the state read here (then the lock waits for it) */
    while (!atomic_load(&set_state.unmapping) && p < end && pagemap_get(p) == state)
        p += PAGE;
    if (p >= end)
        return;
    sigset_t old;
    int guard = traced_lock_guarded(&old);
    int active = atomic_load(&set_state.active);
    /* one change: no completion sees a page traced but not yet closed
     * (it would write through /proc/self/mem behind a locked instruction
     * of a thread that still touches the page itself) */
    change_begin();
    for (; p < end; p += PAGE) {
        if (pagemap_get(p) == state)
            continue;
        pagemap_set_range(p, p + 1, state);
        if (active && !page_is_open(p))
            set_prot(p, PAGE, PROT_NONE);
    }
    change_end();
    traced_unlock_guarded(guard, &old);
}

/* Clears the state of [start, end): its pages are traced no more. */
static void forget(uintptr_t start, uintptr_t end)
{
    if (traced_kept() && end > start)
        pagemap_set_range(page_start(start), end, 0);
}

static void untrack(uintptr_t start, uintptr_t end)
{
    /* accesses logged before (rewritten code) are judged by the set as it
     * was when they were made */
    tracer_sync();
    forget(start, end);
}

void traced_move(uintptr_t old, size_t old_len, uintptr_t new_addr,
                size_t new_len)
{
    uint8_t st = pagemap_get(old);
    if (set_state.listener)
        set_state.listener->moved(old, old_len, new_addr, new_len);
    untrack(old, old + old_len);
    if (st & PM_TRACKED)
        traced_add(new_addr, new_addr + new_len, st & PM_PROT_MASK,
                    st & (PM_REGION_MASK | PM_SHARED));
}

/* The rights page has now (lock held). */
static int rights_now(uintptr_t page)
{
    uint8_t st = pagemap_get(page);
    return atomic_load(&set_state.active) && (st & PM_TRACKED) && !page_is_open(page)
               ? PROT_NONE
               : st & PM_PROT_MASK;
}

void traced_alias_hot(uintptr_t addr)
{
    uintptr_t page = page_start(addr);
    /* a shared mapping's page stays the mapping's: an alias (memtap's
     * memfd) would no longer be what other processes map (chromium's
     * children found their shared memory corrupt) */
    if ((pagemap_get(page) & PM_SHARED) || !alias_heat(page))
        return;
    sigset_t old;
    int guard = traced_lock_guarded(&old);
    if (rights_now(page) == PROT_NONE && (pagemap_get(page) & PM_TRACKED)) {
        change_begin();
        alias_make(page);
        change_end();
    }
    traced_unlock_guarded(guard, &old);
}

long traced_remap(uintptr_t old, size_t old_len, size_t new_len, int flags, uintptr_t want)
{
    long r;
    if (!alias_enabled() || (flags & ~(MREMAP_MAYMOVE | MREMAP_FIXED)) ||
        ((flags & MREMAP_FIXED) && !(flags & MREMAP_MAYMOVE)) || (old & (PAGE - 1)) ||
        new_len == 0)
        return raw_syscall6(SYS_mremap, (long)old, (long)old_len, (long)new_len, flags,
                            (long)want, 0);
    old_len = (old_len + PAGE - 1) & ~(size_t)(PAGE - 1);
    new_len = (new_len + PAGE - 1) & ~(size_t)(PAGE - 1);
    sigset_t mask;
    int guard = traced_lock_guarded(&mask);
    change_begin();
    /* pages aliased, or once aliased and made private again while others
     * ran (a mapping of their own), split the range's mapping */
    r = alias_within(old, old + old_len)
            ? -EFAULT
            : raw_syscall6(SYS_mremap, (long)old, (long)old_len, (long)new_len, flags,
                           (long)want, 0);
    if (r == -EFAULT && traced_has(old, old_len))
        r = alias_remap(old, old_len, new_len, flags, want, pagemap_get(old) & PM_PROT_MASK);
    change_end();
    traced_unlock_guarded(guard, &mask);
    return r;
}

/* f(start, end) on the aliases of [start, end) as one change, when
 * there are any. */
static void aliases_change(void (*f)(uintptr_t, uintptr_t), uintptr_t start, uintptr_t end)
{
    if (!alias_count())
        return;
    sigset_t old;
    int guard = traced_lock_guarded(&old);
    change_begin();
    f(start, end);
    change_end();
    traced_unlock_guarded(guard, &old);
}

void traced_dropped(uintptr_t start, size_t len)
{
    aliases_change(alias_zero, start, start + len);
}

/* ---- a fork: aliased pages private again first ---- */

void traced_after_fork_child(void)
{
    /* only this thread is here: what the others were doing is not */
    atomic_store(&set_state.inflight, 0);
    tls_inflight = 0;
    atomic_store(&set_state.changing, 0);
    set_state.change_depth = 0;
    atomic_store(&set_state.unmapping, 0);
    atomic_store(&set_state.lock, 0);
}

void traced_before_fork(void)
{
    alias_hold();
    if (!alias_count())
        return;
    sigset_t old;
    traced_guard_signals(&old);
    int alone = world_stop(); /* (the others parked: none meets a page open) */
    traced_lock();
    change_begin();
    alias_restore(0, UINTPTR_MAX, rights_now, alone);
    change_end();
    traced_unlock();
    world_resume();
    traced_unguard_signals(&old);
}

void traced_stop(uintptr_t start, uintptr_t end)
{
    sigset_t old;
    int guard = traced_lock_guarded(&old);
    change_begin(); /* no completion sees the page untraced but closed */
    for (uintptr_t p = page_start(start); p < end; p += PAGE) {
        uint8_t st = pagemap_get(p);
        if (!(st & PM_TRACKED))
            continue;
        pagemap_set_range(p, p + PAGE, 0);
        set_prot(p, PAGE, st & PM_PROT_MASK);
    }
    change_end();
    traced_unlock_guarded(guard, &old);
}

void traced_remove(uintptr_t start, uintptr_t end)
{
    if (set_state.listener)
        set_state.listener->unmapped(start, end);
    aliases_change(alias_forget, start, end); /* (unmapped) */
    untrack(start, end);
}

long traced_unmap(long nr, const long *a)
{
    uintptr_t start = (uintptr_t)a[0], end = start + (uintptr_t)a[1];
    tracer_sync(); /* as untrack does */
    if (nr == SYS_mmap && set_state.listener) /* the tools' shadow moves out of
                                         the way first */
        set_state.listener->before_fixed(start, (size_t)a[1]);
    atomic_fetch_add(&set_state.unmapping, 1);
    sigset_t old;
    int guard = traced_lock_guarded(&old);
    long r = nr == SYS_munmap
                 ? raw_syscall3(SYS_munmap, a[0], a[1], 0)
                 : raw_syscall6(SYS_mmap, a[0], a[1], a[2], a[3], a[4], a[5]);
    int done = nr == SYS_munmap ? r == 0 : r == a[0];
    if (done) {
        change_begin(); /* no completion reaches a forgotten alias */
        alias_forget(start, end);
        change_end();
        forget(start, end);
    }
    traced_unlock_guarded(guard, &old);
    atomic_fetch_sub(&set_state.unmapping, 1);
    if (done && set_state.listener) /* the tools' own work: not under the lock */
        set_state.listener->unmapped(start, end);
    return r;
}

long traced_mprotect(uintptr_t start, size_t len, int prot)
{
    sigset_t old;
    int guard = traced_lock_guarded(&old);
    /* one change: the kernel gives the pages the program's rights, and the
     * traced ones that are not open are closed again before any completion
     * can see them open */
    change_begin();
    long r = raw_syscall3(SYS_mprotect, start, len, prot);
    for (uintptr_t p = page_start(start); r == 0 && p < start + len; p += PAGE) {
        uint8_t st = pagemap_get(p);
        if (!(st & PM_TRACKED))
            continue;
        pagemap_set_range(p, p + 1, (uint8_t)((st & ~PM_PROT_MASK) | (prot & 7)));
        if (atomic_load(&set_state.active) && !page_is_open(p))
            set_prot(p, PAGE, PROT_NONE);
    }
    change_end();
    traced_unlock_guarded(guard, &old);
    return r;
}

static void protect_run(uintptr_t start, uintptr_t end, uint8_t state,
                        void *arg)
{
    int on = *(int *)arg;
    set_prot(start, end - start, on ? PROT_NONE : (state & PM_PROT_MASK));
}

void traced_set_active(int on)
{
    if (!set_state.protecting || atomic_load(&set_state.active) == on)
        return;
    sigset_t old;
    traced_guard_signals(&old);
    traced_lock();
    change_begin(); /* completions see the rights and `active` agree */
    atomic_store(&set_state.active, on);
    pagemap_for_each_tracked(protect_run, &on);
    change_end();
    traced_unlock();
    traced_unguard_signals(&old);
}

