/*
 * alias.c - second mappings of hot traced pages (alias.h).  Owns the
 * memfd's two mappings (the arena: read-write, memtap's; its closed twin,
 * whose pages mremap copies onto the program's addresses), the table of
 * aliased pages and the heat counts.
 *
 * No descriptor stays open: once the memfd is mapped twice it is closed,
 * and a page reaches the program's address by mremap with old size 0 (a
 * shared mapping's pages mapped again), closed from the start.  A slot
 * given back is emptied with MADV_REMOVE.  Pages stay aliased until
 * unmapped or a fork (traced_set.c calls these inside its changes): an
 * mremap is made a piece at a time (alias_remap), a madvise that drops
 * pages zeroes their aliases, and before a fork every page is made
 * private again (alias_restore), with the other threads stopped: a
 * private page mapped anew merges with its neighbours into one mapping
 * only when it was made writable (accounted, as the program's own were),
 * which no other thread may see.
 */
#define _GNU_SOURCE
#include "alias.h"
#include "preload/core/config.h"
#include "sys/hash.h"
#include "sys/page.h"
#include "sys/rawsys.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#ifndef MFD_CLOEXEC
#define MFD_CLOEXEC 1u
#endif

/* Each aliased page is a mapping of its own (two more where it splits
 * one): few enough that the program keeps room under vm.max_map_count
 * (65,530 by default). */
#define SLOTS 4096
#define TABLE (4 * SLOTS)      /* open addressing, a power of two */
#define HEAT_SLOTS 4096        /* direct-mapped counts */
#define HOT 8                  /* completions that make a page hot */

typedef struct entry {
    uintptr_t page;            /* 0: empty */
    uint32_t slot;
} entry;

static struct {
    int on;
    int failed;                /* the memfd could not be made: never again */
    uint32_t hot;
    uint8_t *arena;            /* SLOTS pages, read and write */
    uint8_t *closed;           /* the same pages, no rights */
    int (*read)(void *buf, size_t n, uint64_t addr);   /* /proc/self/mem */
    int (*write)(uint64_t addr, const void *buf, size_t n);
    uint32_t bump;             /* slots never used start here */
    uint32_t nfree;
    uint32_t free[SLOTS];
    entry table[TABLE];
    _Atomic uint32_t count;
    atomic_int held;           /* alias_hold: a fork is being made */
    struct { uintptr_t page; uint32_t n; } heat[HEAT_SLOTS];
    uint64_t made, forgotten, restored;
} al;

void alias_init(int eager, int (*read)(void *buf, size_t n, uint64_t addr),
                int (*write)(uint64_t addr, const void *buf, size_t n))
{
    al.on = config()->fault_alias == 0 && read && write;
    al.hot = eager ? 1 : HOT;
    al.read = read;
    al.write = write;
}

int alias_enabled(void) { return al.on; }
uint32_t alias_count(void) { return atomic_load_explicit(&al.count, memory_order_relaxed); }
void alias_hold(void) { atomic_fetch_add(&al.held, 1); }
void alias_release(void) { atomic_fetch_sub(&al.held, 1); }

static size_t home(uintptr_t page) { return (size_t)(fib_mix(page >> PAGE_SHIFT) & (TABLE - 1)); }

/* The table position of page, or the empty one where it would go. */
static size_t find(uintptr_t page)
{
    size_t i = home(page);
    while (al.table[i].page && al.table[i].page != page)
        i = (i + 1) & (TABLE - 1);
    return i;
}

uint8_t *alias_at(uintptr_t addr)
{
    if (!alias_count())
        return NULL;
    const entry *e = &al.table[find(page_start(addr))];
    return e->page ? al.arena + (size_t)e->slot * PAGE + (addr & (PAGE - 1)) : NULL;
}

int alias_heat(uintptr_t page)
{
    if (!al.on || al.failed || atomic_load(&al.held) ||
        (al.nfree == 0 && al.bump == SLOTS))
        return 0;
    /* (racy counts: a page made hot a little late or early is the same) */
    __typeof__(al.heat[0]) *h = &al.heat[fib_mix(page >> PAGE_SHIFT) % HEAT_SLOTS];
    if (h->page != page) {
        h->page = page;
        h->n = 0;
    }
    if (++h->n < al.hot)
        return 0;
    h->n = 0; /* (hot again later: a page unmapped and mapped anew) */
    return 1;
}

/* The memfd and its two mappings; 0, or -1 (never tried again). */
static int arena_make(void)
{
    size_t len = (size_t)SLOTS * PAGE;
    long fd = raw_syscall3(SYS_memfd_create, "memtap-alias", MFD_CLOEXEC, 0);
    if (RAW_FAILED(fd))
        return -1;
    long a = RAW_FAILED(raw_syscall3(SYS_ftruncate, fd, (long)len, 0))
                 ? -1
                 : raw_syscall6(SYS_mmap, 0, (long)len, PROT_READ | PROT_WRITE,
                                MAP_SHARED | MAP_NORESERVE, fd, 0);
    long c = RAW_FAILED(a) ? -1
                           : raw_syscall6(SYS_mmap, 0, (long)len, PROT_NONE,
                                          MAP_SHARED | MAP_NORESERVE, fd, 0);
    raw_syscall3(SYS_close, fd, 0, 0);
    if (RAW_FAILED(c)) {
        if (!RAW_FAILED(a))
            raw_syscall3(SYS_munmap, a, (long)len, 0);
        return -1;
    }
    al.arena = (uint8_t *)a;
    al.closed = (uint8_t *)c;
    return 0;
}

/* A slot's page emptied and given back. */
static void slot_free(uint32_t slot)
{
    raw_syscall3(SYS_madvise, (long)(al.arena + (size_t)slot * PAGE), PAGE, MADV_REMOVE);
    al.free[al.nfree++] = slot;
}

int alias_make(uintptr_t page)
{
    if (!al.arena && !al.failed && arena_make() != 0)
        al.failed = 1;
    if (al.failed || (al.nfree == 0 && al.bump == SLOTS))
        return -1;
    size_t at = find(page);
    if (al.table[at].page) /* (aliased already) */
        return 0;
    uint32_t slot = al.nfree ? al.free[--al.nfree] : al.bump++;
    uint8_t *a = al.arena + (size_t)slot * PAGE;
    long r = al.read(a, PAGE, page) != 0
                 ? -1
                 : raw_syscall6(SYS_mremap, (long)(al.closed + (size_t)slot * PAGE), 0,
                                PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, (long)page, 0);
    if (r != (long)page) {
        slot_free(slot);
        return -1;
    }
    al.table[at] = (entry){ page, slot };
    atomic_fetch_add(&al.count, 1);
    al.made++;
    return 0;
}

/* Takes entry i out (backward-shift deletion keeps probe chains whole). */
static void table_erase(size_t i)
{
    al.table[i].page = 0;
    for (size_t j = (i + 1) & (TABLE - 1); al.table[j].page; j = (j + 1) & (TABLE - 1)) {
        size_t h = home(al.table[j].page);
        if (((j - h) & (TABLE - 1)) >= ((j - i) & (TABLE - 1))) {
            al.table[i] = al.table[j];
            al.table[j].page = 0;
            i = j;
        }
    }
    atomic_fetch_sub(&al.count, 1);
}

/* Each aliased page of [start, end), by its table position: f(i). */
static void each_in(uintptr_t start, uintptr_t end, void (*f)(size_t i, void *arg),
                    void *arg)
{
    if (!alias_count() || end <= start)
        return;
    uintptr_t first = page_start(start);
    if ((end - first) / PAGE <= TABLE) {
        for (uintptr_t p = first; p < end && alias_count(); p += PAGE) {
            size_t i = find(p);
            if (al.table[i].page)
                f(i, arg);
        }
        return;
    }
    for (size_t i = 0; i < TABLE;) { /* (an erase may shift one into i) */
        uintptr_t p = al.table[i].page;
        if (p && p >= first && p < end)
            f(i, arg);
        if (al.table[i].page == p)
            i++;
    }
}

static void forget_one(size_t i, void *arg)
{
    (void)arg;
    uint32_t slot = al.table[i].slot;
    table_erase(i);
    slot_free(slot);
    al.forgotten++;
}

void alias_forget(uintptr_t start, uintptr_t end)
{
    each_in(start, end, forget_one, NULL);
}

/* Whether page has an alias. */
static int aliased(uintptr_t page) { return al.table[find(page)].page != 0; }

static void count_one(size_t i, void *arg)
{
    (void)i;
    ++*(size_t *)arg;
}

int alias_within(uintptr_t start, uintptr_t end)
{
    size_t n = 0;
    each_in(start, end, count_one, &n);
    return n != 0;
}

static void zero_one(size_t i, void *arg)
{
    (void)arg;
    memset(al.arena + (size_t)al.table[i].slot * PAGE, 0, PAGE);
}

void alias_zero(uintptr_t start, uintptr_t end)
{
    each_in(start, end, zero_one, NULL);
}

/* The aliases of [from, from+len) now at `to` on (moved by hand). */
static void aliases_moved(uintptr_t from, size_t len, uintptr_t to)
{
    for (uintptr_t k = 0; k < len; k += PAGE) {
        size_t i = find(from + k);
        if (!al.table[i].page)
            continue;
        uint32_t slot = al.table[i].slot;
        table_erase(i);
        al.table[find(to + k)] = (entry){ to + k, slot };
        atomic_fetch_add(&al.count, 1);
    }
}

/* [from, from+len) moved to `to` a mapping at a time (the range's pages
 * all aliased or all not: a page at a time where several mappings split
 * it), its aliases following; what moved goes back if a piece cannot.  0,
 * or -1 (nothing moved). */
static int move_pieces(uintptr_t from, size_t len, uintptr_t to)
{
    if (raw_syscall6(SYS_mremap, (long)from, (long)len, (long)len,
                     MREMAP_MAYMOVE | MREMAP_FIXED, (long)to, 0) == (long)to) {
        aliases_moved(from, len, to);
        return 0;
    }
    size_t k = 0;
    while (k < len && raw_syscall6(SYS_mremap, (long)(from + k), PAGE, PAGE,
                                   MREMAP_MAYMOVE | MREMAP_FIXED, (long)(to + k),
                                   0) == (long)(to + k))
        k += PAGE;
    aliases_moved(from, k, to);
    if (k == len)
        return 0;
    for (size_t j = 0; j < k; j += PAGE) /* (undone: the range as it was) */
        raw_syscall6(SYS_mremap, (long)(to + j), PAGE, PAGE, MREMAP_MAYMOVE | MREMAP_FIXED,
                     (long)(from + j), 0);
    aliases_moved(to, k, from);
    return -1;
}

long alias_remap(uintptr_t old, size_t old_len, size_t new_len, int flags, uintptr_t want,
                 int prot)
{
    uintptr_t keep = new_len < old_len ? new_len : old_len;
    if (new_len < old_len) { /* the tail goes */
        alias_forget(old + new_len, old + old_len);
        raw_syscall3(SYS_munmap, (long)(old + new_len), (long)(old_len - new_len), 0);
    }
    uintptr_t to = old;
    if (flags & MREMAP_FIXED) {
        to = want;
    } else if (new_len > old_len && (flags & MREMAP_MAYMOVE)) {
        long r = raw_syscall6(SYS_mmap, 0, (long)new_len, PROT_NONE,
                              MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (RAW_FAILED(r))
            return r;
        to = (uintptr_t)r;
    }
    if (to != old) {
        alias_forget(to, to + new_len);
        for (uintptr_t k = 0; k < keep;) {
            uintptr_t run = PAGE; /* a run of pages all aliased or all not */
            int a = aliased(old + k);
            while (k + run < keep && aliased(old + k + run) == a)
                run += PAGE;
            if (move_pieces(old + k, run, to + k) != 0) {
                /* the runs before go back (the reservation, then empty, too) */
                if (k > 0 && move_pieces(to, k, old) != 0)
                    raw_say_lit("memtap: warning: an mremap over pages with aliases "
                                "failed half way: part of the range stays moved\n");
                else if (!(flags & MREMAP_FIXED))
                    raw_syscall3(SYS_munmap, (long)to, (long)new_len, 0);
                return -EFAULT;
            }
            k += run;
        }
    }
    if (new_len > old_len) {
        long g = raw_syscall6(SYS_mmap, (long)(to + old_len), (long)(new_len - old_len), prot,
                              MAP_PRIVATE | MAP_ANONYMOUS |
                                  (to == old ? MAP_FIXED_NOREPLACE : MAP_FIXED), -1, 0);
        if (g != (long)(to + old_len))
            return -ENOMEM;
    }
    return (long)to;
}

/* Page back to private memory with its bytes and rights prot: mapped
 * anew in place and written while open when no other thread runs (it
 * merges with its neighbours again), else mapped closed and written
 * through /proc/self/mem (never open; a mapping of its own).  0, or -1
 * (it stays shared, or when the write failed, empty). */
static int make_private(uintptr_t page, const uint8_t *bytes, int prot, int alone)
{
    long t = raw_syscall6(SYS_mmap, (long)page, PAGE,
                          alone ? PROT_READ | PROT_WRITE : PROT_NONE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (t != (long)page)
        return -1;
    if (alone)
        memcpy((void *)page, bytes, PAGE);
    else if (al.write(page, bytes, PAGE) != 0)
        return -1;
    return (alone || prot != PROT_NONE) ? (int)raw_syscall3(SYS_mprotect, t, PAGE, prot) : 0;
}

typedef struct restoring {
    int (*prot_of)(uintptr_t page);
    int alone;
} restoring;

static void restore_one(size_t i, void *arg)
{
    const restoring *r = arg;
    entry e = al.table[i];
    if (make_private(e.page, al.arena + (size_t)e.slot * PAGE, r->prot_of(e.page),
                     r->alone) != 0)
        return; /* (left shared: it keeps working through its alias) */
    table_erase(i);
    slot_free(e.slot);
    al.restored++;
}

void alias_restore(uintptr_t start, uintptr_t end, int (*prot_of)(uintptr_t page), int alone)
{
    restoring r = { prot_of, alone };
    each_in(start, end, restore_one, &r);
}

void alias_after_fork_child(void)
{
    if (al.arena) { /* (the parent's memfd; no page of it is mapped here) */
        raw_syscall3(SYS_munmap, (long)al.arena, (long)SLOTS * PAGE, 0);
        raw_syscall3(SYS_munmap, (long)al.closed, (long)SLOTS * PAGE, 0);
    }
    al.arena = al.closed = NULL;
    al.bump = al.nfree = 0;
    if (alias_count()) /* (pages that could not be made private: shared still) */
        memset(al.table, 0, sizeof al.table);
    atomic_store(&al.count, 0);
    atomic_store(&al.held, 0);
    al.made = al.forgotten = al.restored = 0;
}

void alias_end_stats(fmt_buf *b)
{
    if (!al.on || !(al.made | al.failed))
        return;
    static const char *const keys[] = { "alias_pages_made=", "\nalias_pages_forgotten=",
                                        "\nalias_pages_restored=", "\nalias_failed=" };
    uint64_t v[] = { al.made, al.forgotten, al.restored, (uint64_t)al.failed };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        fmt_str(b, keys[i]);
        fmt_u64(b, v[i]);
    }
    fmt_char(b, '\n');
}
