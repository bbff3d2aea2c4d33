/*
 * go_functab.c - reads the function table of Go's .gopclntab (see
 * go_functab.h).  Its header, by the magic number of the Go release that
 * wrote it (ptrSize 8 only):
 *   0xfffffffb (Go 1.2-1.15):  nfunc at 8, the table at 16, entries
 *                              {pc, funcoff} of 8 bytes each;
 *   0xfffffffa (Go 1.16-1.17): nfunc at 8, the table's offset at 56,
 *                              entries as above;
 *   0xfffffff0, 0xfffffff1 (Go 1.18-): nfunc at 8, textStart at 24, the
 *                              table's offset at 64, entries {entryoff,
 *                              funcoff} of 4 bytes each, relative to
 *                              textStart.
 * The table has nfunc entries and then the end of the last function.
 */
#include "go_functab.h"

#include <string.h>

static uint64_t read_u64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static uint32_t read_u32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

typedef struct layout {
    uint64_t nfunc, table, base;
    unsigned entry_bytes;   /* 8: 32-bit offsets, 16: 64-bit pcs */
} layout;

static int read_layout(const uint8_t *d, size_t n, layout *l)
{
    if (n < 72 || d[4] != 0 || d[5] != 0 || d[7] != 8)
        return -1;
    uint32_t magic = read_u32(d);
    l->nfunc = read_u64(d + 8);
    l->base = 0;
    switch (magic) {
    case 0xfffffffbu:
        l->table = 16;
        l->entry_bytes = 16;
        break;
    case 0xfffffffau:
        l->table = read_u64(d + 56);
        l->entry_bytes = 16;
        break;
    case 0xfffffff0u:
    case 0xfffffff1u:
        l->base = read_u64(d + 24);
        l->table = read_u64(d + 64);
        l->entry_bytes = 8;
        break;
    default:
        return -1;
    }
    /* nfunc entries and the end, inside the section */
    if (l->table >= n || l->nfunc >= (n - l->table) / l->entry_bytes)
        return -1;
    return 0;
}

/* The start of entry i (i == nfunc: the end of the last function). */
static uint64_t entry_pc(const uint8_t *d, const layout *l, uint64_t i)
{
    const uint8_t *e = d + l->table + i * l->entry_bytes;
    return l->entry_bytes == 8 ? l->base + read_u32(e) : read_u64(e);
}

int go_functab_each(const uint8_t *data, size_t n,
                    int (*fn)(void *arg, uint64_t start, uint64_t size),
                    void *arg)
{
    layout l;
    if (read_layout(data, n, &l) != 0)
        return 0;
    for (uint64_t i = 0; i < l.nfunc; i++)
        if (entry_pc(data, &l, i + 1) < entry_pc(data, &l, i))
            return 0;
    for (uint64_t i = 0; i < l.nfunc; i++) {
        uint64_t start = entry_pc(data, &l, i);
        uint64_t end = entry_pc(data, &l, i + 1);
        if (end == start)
            continue;
        int rc = fn(arg, start, end - start);
        if (rc)
            return rc;
    }
    return 0;
}
