/*
 * rewritten.c - the runtime of programs and libraries rewritten by
 * `memtap instrument` (see rewrite/abi.h), inside libmemtap.so.
 *
 * At start-up and after each dlopen it finds the modules that carry a
 * rewritten segment, fills in their stub (the TLS offsets of this
 * library's log cursor, the module's tag, the flush function) and turns
 * the stub on.  The stub appends 16-byte entries to the calling thread's
 * buffer without locks or system calls; when the buffer is full it calls
 * rewritten_flush(), which turns the entries into L and S records (with
 * the pc of the original instruction and the count of the file's mode)
 * through the tracer, and so into the trace or a shadow-memory tool.  A
 * thread's entries are also turned into records before any other event of
 * that thread (an allocation, a free), so the trace keeps its order.
 */
#define _GNU_SOURCE
#include "rewritten.h"

#include "rawsys.h"
#include "rewrite/abi.h"
#include "tracer.h"

#include <link.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#define MAX_MODULES 255
#define ENTRIES 16384u          /* per thread buffer */
#define SCRATCH 256u            /* entries of memtap's own work, dropped */
#define PAGE 4096u

typedef struct rt_module {
    uint64_t bias;
    uint64_t header;            /* runtime address of the header */
    const mt_site *sites;
    uint32_t nsites;
} rt_module;

/* The cursor and the room left: the stub reads and writes these two
 * through %fs, so they must stay in the initial-exec TLS block. */
typedef struct rt_tls {
    uint64_t cursor;
    uint64_t remaining;
} rt_tls;

static struct {
    rt_module mods[MAX_MODULES];
    _Atomic uint32_t nmods;
    atomic_int lock;
    int discard;                /* MEMTAP_REWRITE_DISCARD=1: measure the
                                   logging path alone, record nothing */
} rt;

static __thread rt_tls tls_log __attribute__((tls_model("initial-exec")));
static __thread mt_entry *tls_base __attribute__((tls_model("initial-exec")));
static __thread mt_entry tls_scratch[SCRATCH]
    __attribute__((tls_model("initial-exec")));
static __thread int tls_flushing __attribute__((tls_model("initial-exec")));

static void emit_entries(const mt_entry *e, const mt_entry *end)
{
    uint32_t nmods = atomic_load(&rt.nmods);
    for (; e < end; e++) {
        uint32_t m = e->site >> MT_SITE_BITS;
        uint32_t i = e->site & ((1u << MT_SITE_BITS) - 1);
        if (m >= nmods || i >= rt.mods[m].nsites)
            continue;
        const mt_site *s = &rt.mods[m].sites[i];
        uint64_t pc = rt.mods[m].bias + s->pc;
        if (s->read)
            tracer_emit_count(MEMTAP_EV_LOAD, pc, e->addr, s->size, s->count);
        if (s->write)
            tracer_emit_count(MEMTAP_EV_STORE, pc, e->addr, s->size, s->count);
    }
}

/* Turns the calling thread's entries into records and empties its buffer.
 * What memtap's own work logs meanwhile (when libc itself is rewritten)
 * goes to a scratch buffer and is dropped. */
static void drain(void)
{
    if (tls_flushing) { /* called from inside a drain: drop memtap's own */
        tls_log.cursor = (uint64_t)(uintptr_t)tls_scratch;
        tls_log.remaining = SCRATCH;
        return;
    }
    tls_flushing = 1;
    mt_entry *base = tls_base;
    mt_entry *end = base ? (mt_entry *)(uintptr_t)tls_log.cursor : NULL;
    tls_log.cursor = (uint64_t)(uintptr_t)tls_scratch;
    tls_log.remaining = SCRATCH;
    if (!base) {
        base = tracer_map(ENTRIES * sizeof *base);
        tls_base = base;
        end = base;
    }
    if (base && end >= base && end <= base + ENTRIES && !rt.discard)
        emit_entries(base, end);
    if (base) {
        tls_log.cursor = (uint64_t)(uintptr_t)base;
        tls_log.remaining = ENTRIES;
    } else {
        tls_log.remaining = 0; /* no memory: every entry calls us, dropped */
    }
    tls_flushing = 0;
}

/* The flush function the stubs call (with everything saved). */
static void rewritten_flush(void)
{
    tracer_internal_enter();
    drain();
    tracer_internal_leave();
}

void rewritten_sync(void)
{
    if (tls_base && !tls_flushing &&
        tls_log.cursor != (uint64_t)(uintptr_t)tls_base)
        drain();
}

void rewritten_thread_exit(void)
{
    rewritten_sync();
    if (tls_base) {
        tracer_unmap(tls_base, ENTRIES * sizeof *tls_base);
        tls_base = NULL;
    }
    /* later entries of this thread (its exit path) go nowhere */
    tls_log.cursor = (uint64_t)(uintptr_t)tls_scratch;
    tls_log.remaining = SCRATCH;
    tls_flushing = 1;
}

void rewritten_after_fork_child(void)
{
    /* the entries in the buffer are the parent's */
    if (tls_base) {
        tls_log.cursor = (uint64_t)(uintptr_t)tls_base;
        tls_log.remaining = ENTRIES;
    }
}

static int64_t tls_offset(const void *p)
{
    return (int64_t)((uintptr_t)p - (uintptr_t)__builtin_thread_pointer());
}

static int set_prot(uint64_t start, uint64_t end, int prot)
{
    start &= ~(uint64_t)(PAGE - 1);
    end = (end + PAGE - 1) & ~(uint64_t)(PAGE - 1);
    return (int)raw_syscall3(SYS_mprotect, start, end - start, prot);
}

static void put32(uint64_t at, int64_t v)
{
    int32_t d = (int32_t)v;
    memcpy((void *)(uintptr_t)at, &d, 4);
}

/* Fills in and turns on the stub of one rewritten module. */
static void hook(uint64_t bias, const mt_rewrite_header *h)
{
    uint32_t m = atomic_load(&rt.nmods);
    for (uint32_t i = 0; i < m; i++)
        if (rt.mods[i].header == (uint64_t)(uintptr_t)h)
            return; /* already on */
    if (m == MAX_MODULES || h->version != MT_REWRITE_VERSION ||
        h->ntls > MT_TLS_PATCHES)
        return;
    uint64_t at = (uint64_t)(uintptr_t)h;
    uint64_t end = at + h->segment_size;
    rt_module *mod = &rt.mods[m];
    mod->bias = bias;
    mod->header = at;
    mod->sites = (const mt_site *)(uintptr_t)(at + h->sites);
    mod->nsites = h->nsites;
    if (set_prot(at, end, PROT_READ | PROT_WRITE) != 0)
        return;
    for (uint32_t i = 0; i < h->ntls; i++)
        put32(at + h->tls_disp[i],
              tls_offset(h->tls_field[i] == MT_TLS_CURSOR ? &tls_log.cursor
                                                          : &tls_log.remaining));
    put32(at + h->tag_disp, (int64_t)m << MT_SITE_BITS);
    void (*flush)(void) = rewritten_flush;
    memcpy((void *)(uintptr_t)(at + h->flush_slot), &flush, sizeof flush);
    *(volatile uint8_t *)(uintptr_t)(at + h->stub) = 0x90; /* ret -> nop */
    set_prot(at, end, PROT_READ | PROT_EXEC);
    atomic_store(&rt.nmods, m + 1);
}

static int find_rewritten(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    (void)arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) ||
            ph->p_memsz < sizeof(mt_rewrite_header))
            continue;
        const mt_rewrite_header *h =
            (const mt_rewrite_header *)(uintptr_t)(info->dlpi_addr + ph->p_vaddr);
        if (memcmp(h->magic, MT_REWRITE_MAGIC, sizeof h->magic) == 0 &&
            h->segment_vaddr == ph->p_vaddr && h->segment_size <= ph->p_memsz)
            hook(info->dlpi_addr, h);
    }
    return 0;
}

void rewritten_scan(void)
{
    if (!tracer_enabled())
        return;
    int expected = 0;
    while (!atomic_compare_exchange_weak(&rt.lock, &expected, 1))
        expected = 0;
    const char *discard = getenv("MEMTAP_REWRITE_DISCARD");
    rt.discard = discard && discard[0] == '1';
    dl_iterate_phdr(find_rewritten, NULL);
    atomic_store(&rt.lock, 0);
}

int rewritten_modules(void) { return (int)atomic_load(&rt.nmods); }
