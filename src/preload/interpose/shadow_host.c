/*
 * shadow_host.c - hosting a shadow-memory tool in libmemtap.so: per-thread
 * shadow state and reference caches (one per instruction, hashed by pc: Umbra's
 * O4), the mapping kept current from the program's memory calls, and the
 * translation of trace records into tool calls.
 */
#define _GNU_SOURCE
#include "shadow_host.h"
#include "preload/core/config.h"
#include "sys/rawsys.h"
#include "sys/env.h"
#include "sys/hash.h"

#include "preload/memmap/traced_set.h"
#include "preload/core/fmt.h"
#include "rt/rewritten.h"
#include "shadow/tool.h"
#include "preload/record/tracer.h"

#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REFS 128u

static struct {
    const shadow_tool *tool;
    memtap_shadow *space;
    uint64_t libc_lo, libc_hi;  /* the C library's text: blocks it
                                   allocates for itself (stdio's) it fills
                                   in code that is not the program's */
} host;

/* Finds the text segment of the object holding `fopen`'s code. */
static int libc_text(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    uint64_t at = (uint64_t)(uintptr_t)arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *p = &info->dlpi_phdr[i];
        uint64_t lo = info->dlpi_addr + p->p_vaddr;
        if (p->p_type == PT_LOAD && (p->p_flags & PF_X) && at >= lo &&
            at < lo + p->p_memsz) {
            host.libc_lo = lo;
            host.libc_hi = lo + p->p_memsz;
            return 1;
        }
    }
    return 0;
}

static __thread memtap_shadow_thread *tls_thread
    __attribute__((tls_model("initial-exec")));
static __thread memtap_shadow_ref tls_refs[REFS]
    __attribute__((tls_model("initial-exec")));
static __thread uint64_t tls_block_size
    __attribute__((tls_model("initial-exec")));

int shadow_host_active(void) { return host.tool != NULL; }

static void record(uint8_t kind, uint64_t pc, uint64_t addr, uint64_t size,
                 uint64_t addr2, uint64_t aux)
{
    tracer_record(kind, 0, pc, addr, size, addr2, aux);
}

/* The program's mappings change (the traced set's listener): the shadow
 * of [start, end) is gone; a mapping moved; a MAP_FIXED mapping of
 * [addr, addr+len) is about to be made. */
static void shadow_host_unmapped(uintptr_t start, uintptr_t end)
{
    if (host.tool && end > start)
        memtap_shadow_app_unmap(host.space, start, end - start);
}

static void shadow_host_moved(uintptr_t old, size_t old_len,
                             uintptr_t new_addr, size_t new_len)
{
    if (host.tool)
        memtap_shadow_app_move(host.space, old, old_len, new_addr, new_len);
}

static void shadow_host_before_fixed(uintptr_t addr, size_t len)
{
    if (host.tool && len)
        memtap_shadow_make_room(host.space, addr, len);
}

static const traced_map_listener map_listener = {
    shadow_host_unmapped, shadow_host_moved, shadow_host_before_fixed,
};

void shadow_host_init(void)
{
    const preload_config *c = config();
    const char *name = c->tool;
    if (!*name)
        return;
    const shadow_tool *tool = tool_by_name(name);
    if (!tool) {
        raw_say_lit("memtap: MEMTAP_TOOL: no such tool (heat, share, "
                    "uninit)\n");
        return;
    }
    tool_options opt = { 64, 0, record, rewritten_check_passed };
    if (c->tool_chunk >= 0)
        opt.chunk = (uint32_t)c->tool_chunk;
    opt.check_once = c->check_once;
    if (opt.chunk < 8 || opt.chunk > 4096 || (opt.chunk & (opt.chunk - 1))) {
        raw_say_lit("memtap: MEMTAP_TOOL_CHUNK: a power of two from 8 to "
                    "4096\n");
        return;
    }
    if (tool->init(&opt, &host.space) != 0) {
        raw_say_lit("memtap: the shadow memory cannot be set up\n");
        return;
    }
    dl_iterate_phdr(libc_text, (void *)(uintptr_t)&fopen);
    host.tool = tool;
    traced_set_listener(&map_listener);
}

static memtap_shadow_thread *thread_state(void)
{
    if (!tls_thread) {
        for (unsigned i = 0; i < REFS; i++)
            tls_refs[i] = (memtap_shadow_ref)MEMTAP_SHADOW_REF_INIT;
        tls_thread = memtap_shadow_thread_begin(host.space);
    }
    return tls_thread;
}

static memtap_shadow_ref *ref_of(uint64_t pc)
{
    return &tls_refs[fib_hash(pc, 7)];
}

void shadow_host_note_block_size(uint64_t size) { tls_block_size = size; }

static uint64_t take_block_size(void)
{
    uint64_t n = tls_block_size;
    tls_block_size = 0;
    return n;
}

static int shadow_host_event(uint8_t kind, uint64_t pc, uint64_t addr, uint64_t size,
                uint64_t addr2)
{
    static const char handled[] = { MEMTAP_EV_LOAD, MEMTAP_EV_STORE,
                                    MEMTAP_EV_COPY, MEMTAP_EV_BLOCK_STORE,
                                    MEMTAP_EV_BLOCK_FETCH, MEMTAP_EV_MALLOC,
                                    MEMTAP_EV_CALLOC, MEMTAP_EV_REALLOC,
                                    MEMTAP_EV_FREE, 0 };
    /* the tool's own records (written while a thread's state is being
     * made, too) pass straight through */
    if (!host.tool || !memchr(handled, kind, sizeof handled - 1))
        return 0;
    memtap_shadow_thread *t = thread_state();
    if (!t)
        return kind == MEMTAP_EV_LOAD || kind == MEMTAP_EV_STORE;
    const shadow_tool *tool = host.tool;
    switch (kind) {
    case MEMTAP_EV_LOAD:
    case MEMTAP_EV_STORE:
        tool->access(t, ref_of(pc), pc, addr, (uint32_t)size,
                     kind == MEMTAP_EV_STORE);
        return 1;
    case MEMTAP_EV_COPY:
    case MEMTAP_EV_BLOCK_STORE:
    case MEMTAP_EV_BLOCK_FETCH:
        tool->block(t, kind, pc, addr, addr2, size);
        return 1;
    case MEMTAP_EV_MALLOC:
    case MEMTAP_EV_CALLOC:
        if (tool->alloc)
            tool->alloc(t, addr, size, kind == MEMTAP_EV_CALLOC ||
                                           (pc >= host.libc_lo && pc < host.libc_hi));
        return 0;
    case MEMTAP_EV_REALLOC:
        if (!addr) /* realloc(p, 0): p is freed */
            tool->release(t, addr2, take_block_size());
        else
            tool->realloc(t, addr, size, addr2, take_block_size());
        return 0;
    case MEMTAP_EV_FREE:
        tool->release(t, addr, take_block_size());
        return 0;
    default:
        return 0;
    }
}

static void shadow_host_thread_exit(void)
{
    if (host.tool && tls_thread) {
        memtap_shadow_thread_end(tls_thread);
        tls_thread = NULL;
    }
}

static void shadow_host_after_fork(void)
{
    if (host.tool && host.tool->forked)
        host.tool->forked();
}

static void shadow_host_finish(void)
{
    if (host.tool)
        host.tool->finish();
}

void shadow_host_end_stats(fmt_buf *b)
{
    if (!host.tool)
        return;
    memtap_shadow_stats st;
    memtap_shadow_get_stats(host.space, &st);
    fmt_str(b, "tool=");
    fmt_str(b, host.tool->name);
    fmt_str(b, "\nshadow_units=");
    fmt_u64(b, st.units);
    fmt_str(b, "\nshadow_relocations=");
    fmt_u64(b, st.relocations);
    fmt_str(b, "\nshadow_table_bytes=");
    fmt_u64(b, st.table_bytes);
    fmt_str(b, "\nshadow_resident_bytes=");
    fmt_u64(b, memtap_shadow_resident_bytes(host.space));
    fmt_char(b, '\n');
}

const tracer_client shadow_host_client = {
    .active = shadow_host_active,
    .take = shadow_host_event,
    .thread_exit = shadow_host_thread_exit,
    .after_fork_child = shadow_host_after_fork,
    .finish = shadow_host_finish,
};
