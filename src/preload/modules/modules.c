/*
 * modules.c - tracks the modules loaded in the traced process with
 * dl_iterate_phdr: path, load bias, PT_LOAD segments and GNU build-id.
 * Entries are kept already encoded in an arena of our own memory so that
 * a forked child can rewrite them to its file as they are.
 */
#define _GNU_SOURCE
#include "modules.h"
#include "sys/rawsys.h"
#include "preload/filter/watch.h"
#include "sys/spin.h"
#include "rt/rewritten.h"

#include "preload/memmap/traced_set.h"
#include "preload/filter/ignore.h"
#include "trace/chunk.h"
#include "preload/record/tracer.h"
#include "sys/build_id.h"
#include "cache/key.h"
#include "sys/own_modules.h"
#include "sys/page.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAX_MODULES 4096
#define MAX_SEGS 16
#define MAX_TEXTS 4 /* executable segments kept per module for modules_own_text */

typedef struct module_slot {
    uint64_t base;
    uint64_t first_vaddr;  /* identifies the mapping with base */
    uint64_t text[MAX_TEXTS][2]; /* [start, end) of its executable segments */
    uint32_t offset;       /* encoded entry in the arena */
    uint32_t size;
    uint8_t alive, seen;   /* alive: read without the lock (atomic access) */
    uint8_t untraced;      /* memtap's own, the loader, the vdso */
    uint8_t data_tracked;
} module_slot;

static struct {
    atomic_int lock;
    module_slot *slots;
    uint32_t nslots;
    _Atomic uint32_t published; /* slots complete, for readers without the lock */
    char *arena;
    uint32_t arena_len, arena_cap;
    char exe[4096];
    char exe_original[4096]; /* the original of exe when it is a copy */
} table;

static void lock(void) { spin_acquire(&table.lock); }
static void unlock(void) { spin_release(&table.lock); }

static int reserve(uint32_t need)
{
    if (!table.slots) {
        table.slots = raw_map(MAX_MODULES * sizeof *table.slots);
        if (!table.slots)
            return -1;
    }
    if (table.arena_len + need <= table.arena_cap)
        return 0;
    uint32_t cap = table.arena_cap ? table.arena_cap * 2 : 1u << 16;
    while (cap < table.arena_len + need)
        cap *= 2;
    char *a = raw_map(cap);
    if (!a)
        return -1;
    if (table.arena) {
        memcpy(a, table.arena, table.arena_len);
        raw_unmap(table.arena, table.arena_cap);
    }
    table.arena = a;
    table.arena_cap = cap;
    return 0;
}

static int slot_find(uint64_t base, uint64_t first_vaddr)
{
    for (uint32_t i = 0; i < table.nslots; i++)
        if (table.slots[i].alive && table.slots[i].base == base &&
            table.slots[i].first_vaddr == first_vaddr)
            return (int)i;
    return -1;
}

/* Modules whose memory is never protected: memtap's own and the ones its
 * handlers use, the dynamic loader, the vdso. */
static int is_untraced(const char *path, uint8_t flags)
{
    if (flags & MEMTAP_MODF_VDSO)
        return 1;
    const char *slash = strrchr(path, '/');
    return own_module(slash ? slash + 1 : path);
}

/* The original of a copy in memtap's cache ("<16 hex digits>-NAME", with
 * the original's path in "<copy>.src" beside it: cache/cache.c), so that
 * the trace names the program's own files.  Returns 1 when found. */
static int cached_original(const char *path, char *out, size_t cap)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    if (strlen(base) <= 17 || base[16] != '-')
        return 0;
    for (int i = 0; i < 16; i++)
        if (!((base[i] >= '0' && base[i] <= '9') ||
              (base[i] >= 'a' && base[i] <= 'f')))
            return 0;
    return cache_read_original(path, out, cap) == 0;
}

static uint64_t parse_hex(const char **p)
{
    uint64_t v = 0;
    for (;; (*p)++) {
        char c = **p;
        if (c >= '0' && c <= '9')
            v = v * 16 + (uint64_t)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v = v * 16 + (uint64_t)(c - 'a' + 10);
        else
            return v;
    }
}

/* The writable segments of modules not yet traced, and the brk heap, join
 * the traced set with the rights /proc/self/maps shows for them. */
static void track_data(int with_heap)
{
    if (watch_active()) { /* the watched objects, nothing else */
        watch_track_all();
        return;
    }
    char *maps;
    size_t map_size;
    size_t len = tracer_read_proc("/proc/self/maps", &maps, &map_size);
    for (size_t i = 0; i < len;) {
        const char *p = maps + i;
        uint64_t lo = parse_hex(&p);
        p++;
        uint64_t hi = parse_hex(&p);
        p++;
        int prot = (p[0] == 'r' ? PROT_READ : 0) |
                   (p[1] == 'w' ? PROT_WRITE : 0) |
                   (p[2] == 'x' ? PROT_EXEC : 0);
        const char *eol = memchr(p, '\n', len - (size_t)(p - maps));
        size_t next = eol ? (size_t)(eol - maps) + 1 : len;
        int is_heap = eol && eol - p > 6 && memcmp(eol - 6, "[heap]", 6) == 0;
        if (is_heap && with_heap)
            traced_add(lo, hi, prot, PM_HEAP);
        for (uint32_t k = 0; k < table.nslots && !is_heap; k++) {
            module_slot *s = &table.slots[k];
            if (!s->alive || s->untraced || s->data_tracked)
                continue;
            const memtap_module_entry *e =
                (const memtap_module_entry *)(const void *)(table.arena + s->offset);
            const memtap_segment *seg =
                (const memtap_segment *)(const void *)(e + 1);
            for (uint16_t j = 0; j < e->nsegs; j++) {
                if (!(seg[j].prot & PF_W))
                    continue;
                uint64_t a = s->base + seg[j].vaddr;
                uint64_t b = (a + seg[j].memsz + 4095) & ~4095ull;
                a &= ~4095ull;
                uint64_t x = lo > a ? lo : a, y = hi < b ? hi : b;
                /* read-only after relocation (RELRO: the GOT and
                 * .data.rel.ro) stays open: the C library itself reads
                 * its GOT on the way into memtap's handlers */
                if (x < y && (prot & PROT_WRITE))
                    traced_add(x, y, prot, PM_STATIC);
            }
        }
        i = next;
    }
    for (uint32_t k = 0; k < table.nslots; k++)
        if (table.slots[k].alive)
            table.slots[k].data_tracked = 1;
    if (maps)
        raw_unmap(maps, map_size);
}

void modules_track_data(void)
{
    if (!traced_kept())
        return;
    lock();
    track_data(1);
    unlock();
}

typedef struct scan_state {
    uint32_t first_new;
    int is_first;
} scan_state;

static int on_module(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    scan_state *st = data;
    memtap_segment segs[MAX_SEGS];
    size_t nsegs = 0;
    for (int i = 0; i < info->dlpi_phnum && nsegs < MAX_SEGS; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        segs[nsegs].vaddr = ph->p_vaddr;
        segs[nsegs].memsz = ph->p_memsz;
        segs[nsegs].prot = ph->p_flags;
        segs[nsegs].reserved = 0;
        nsegs++;
    }
    uint64_t first = nsegs ? segs[0].vaddr : 0;
    int idx = slot_find(info->dlpi_addr, first);
    if (idx >= 0) {
        table.slots[idx].seen = 1;
        st->is_first = 0;
        return 0;
    }
    uint8_t flags = 0;
    const char *path = info->dlpi_name;
    if (st->is_first && (!path || !*path)) {
        flags |= MEMTAP_MODF_MAIN;
        path = table.exe;
    } else if (info->dlpi_addr + first == getauxval(AT_SYSINFO_EHDR) ||
               (path && strncmp(path, "linux-vdso", 10) == 0)) {
        flags |= MEMTAP_MODF_VDSO;
        path = "[vdso]";
    }
    st->is_first = 0;
    if (!path || !*path || table.nslots == MAX_MODULES)
        return 0;
    char original[4096];
    if (rewritten_header(info)) {
        flags |= MEMTAP_MODF_REWRITTEN;
        if (cached_original(path, original, sizeof original))
            path = original;
    }
    ignore_module_loaded(path, info->dlpi_addr);
    watch_module_loaded(path, info->dlpi_addr, segs, (uint16_t)nsegs);
    uint8_t build_id[32];
    size_t bid_len = loaded_build_id(info, build_id);
    size_t plen = strlen(path);
    uint32_t need = (uint32_t)(sizeof(memtap_module_entry) +
                               nsegs * sizeof *segs + plen + 8);
    if (reserve(need) != 0)
        return 0;
    size_t n = trace_module_entry_encode(
        table.arena + table.arena_len, need, table.nslots, tracer_seq(), info->dlpi_addr,
        flags, build_id, bid_len, segs, nsegs, path, plen);
    if (!n)
        return 0;
    module_slot *s = &table.slots[table.nslots++];
    s->base = info->dlpi_addr;
    s->first_vaddr = first;
    s->offset = table.arena_len;
    s->size = (uint32_t)n;
    s->alive = s->seen = 1;
    s->untraced = is_untraced(path, flags);
    s->data_tracked = 0;
    memset(s->text, 0, sizeof s->text);
    for (size_t i = 0, t = 0; i < nsegs && t < MAX_TEXTS; i++)
        if (segs[i].prot & PF_X) {
            s->text[t][0] = info->dlpi_addr + segs[i].vaddr;
            s->text[t++][1] = info->dlpi_addr + segs[i].vaddr + segs[i].memsz;
        }
    atomic_store_explicit(&table.published, table.nslots, memory_order_release);
    table.arena_len += (uint32_t)n;
    return 0;
}

void modules_rescan(void)
{
    if (!tracer_enabled())
        return;
    tracer_internal_enter();
    lock();
    if (!table.exe[0]) {
        ssize_t n = readlink("/proc/self/exe", table.exe, sizeof table.exe - 1);
        table.exe[n > 0 ? n : 0] = '\0';
        if (!cached_original(table.exe, table.exe_original,
                             sizeof table.exe_original))
            table.exe_original[0] = '\0';
    }
    for (uint32_t i = 0; i < table.nslots; i++)
        table.slots[i].seen = 0;
    scan_state st = { table.nslots, 1 };
    dl_iterate_phdr(on_module, &st);
    uint32_t first_new = st.first_new;
    if (table.nslots > first_new)
        tracer_write_modules(table.arena + table.slots[first_new].offset,
                             table.arena_len - table.slots[first_new].offset,
                             table.nslots - first_new);
    if (traced_kept() && table.nslots > first_new)
        track_data(0);
    for (uint32_t i = 0; i < table.nslots; i++) {
        if (i >= first_new)
            tracer_record(MEMTAP_EV_MODULE_LOAD, 0, 0, table.slots[i].base, 0, 0, i);
        else if (table.slots[i].alive && !table.slots[i].seen) {
            __atomic_store_n(&table.slots[i].alive, 0, __ATOMIC_RELEASE);
            tracer_record(MEMTAP_EV_MODULE_UNLOAD, 0, 0, table.slots[i].base, 0, 0,
                        i);
        }
    }
    unlock();
    rewritten_scan();
    tracer_internal_leave();
}

int modules_own_text(uint64_t start, uint64_t end)
{
    uint32_t n = atomic_load_explicit(&table.published, memory_order_acquire);
    for (uint32_t k = 0; k < n; k++) {
        const module_slot *s = &table.slots[k];
        if (!__atomic_load_n(&s->alive, __ATOMIC_ACQUIRE))
            continue;
        for (int t = 0; t < MAX_TEXTS && s->text[t][1]; t++)
            if (start >= (s->text[t][0] & ~(uint64_t)(PAGE - 1)) &&
                end <= ((s->text[t][1] + PAGE - 1) & ~(uint64_t)(PAGE - 1)))
                return 1;
    }
    return 0;
}

const char *modules_exe_original(void)
{
    return table.exe_original;
}

void modules_write_all(void)
{
    if (table.nslots)
        tracer_write_modules(table.arena, table.arena_len, table.nslots);
}

/* Whether a text segment may hold a syscall instruction (its bytes
 * anywhere, inside other instructions too: a false match costs one more
 * filter). */
static int may_make_syscalls(uint64_t start, uint64_t len, uint32_t prot)
{
    static const uint8_t syscall_insn[2] = { 0x0f, 0x05 };
    return !(prot & PF_R) ||
           memmem((const void *)start, len, syscall_insn, 2) != NULL;
}

/* Adds [lo, hi) to the n ranges sorted by start (at most max), one with
 * those it touches or overlaps (never across a gap: the filter outlives
 * an exec, whose new image may lie in a gap, and dies of the first call
 * it traps before its own memtap takes SIGSYS); returns the new count, or
 * max + 1 when there was no room. */
static size_t add_range(uint64_t (*r)[2], size_t n, size_t max, uint64_t lo,
                        uint64_t hi)
{
    size_t p = 0;
    while (p < n && r[p][0] <= lo)
        p++;
    if (p > 0 && lo <= r[p - 1][1]) {
        p--; /* into the one before */
        r[p][1] = hi > r[p][1] ? hi : r[p][1];
    } else if (p < n && r[p][0] <= hi) {
        r[p][0] = lo; /* into the one after */
        r[p][1] = hi > r[p][1] ? hi : r[p][1];
    } else {
        if (n == max)
            return max + 1;
        memmove(&r[p + 1], &r[p], (n - p) * sizeof *r);
        r[p][0] = lo;
        r[p][1] = hi;
        n++;
    }
    /* the ones after may touch it now */
    while (p + 1 < n && r[p + 1][0] <= r[p][1]) {
        r[p][1] = r[p + 1][1] > r[p][1] ? r[p + 1][1] : r[p][1];
        memmove(&r[p + 1], &r[p + 2], (n - p - 2) * sizeof *r);
        n--;
    }
    return n;
}

size_t modules_text_ranges(uint32_t *from, int syscalls_only,
                           uint64_t (*ranges)[2], size_t max)
{
    size_t n = 0, lost = 0;
    lock();
    for (uint32_t k = *from; k < table.nslots; k++) {
        const module_slot *s = &table.slots[k];
        const memtap_module_entry *e =
            (const memtap_module_entry *)(const void *)(table.arena + s->offset);
        const char *path = (const char *)(const void *)(e + 1) +
                           e->nsegs * sizeof(memtap_segment);
        /* the loader's system calls touch the program's heap too */
        int loader = strstr(path, "/ld-linux") != NULL;
        if (!s->alive || (s->untraced && !loader))
            continue;
        const memtap_segment *seg = (const memtap_segment *)(const void *)(e + 1);
        for (uint16_t j = 0; j < e->nsegs; j++) {
            uint64_t start = s->base + seg[j].vaddr;
            if (!(seg[j].prot & PF_X) ||
                (syscalls_only &&
                 !may_make_syscalls(start, seg[j].memsz, seg[j].prot)))
                continue;
            size_t m = add_range(ranges, n, max, start, start + seg[j].memsz);
            if (m > max)
                lost++;
            else
                n = m;
        }
    }
    *from = table.nslots;
    unlock();
    return n + lost;
}
