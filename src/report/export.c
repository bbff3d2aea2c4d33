/*
 * export.c - Lackey and Dinero IV lines from trace events (export.h).
 *
 * Lackey: " L addr,size", " S addr,size", " M addr,size" (a load and a
 * store of one instruction at one address and size, which memtap records
 * as an L record followed by an S record of the same thread and pc).
 * Dinero IV extended din: "r addr size" / "w addr size", both in hex (as
 * Dinero IV's reader takes them).
 * A block operation (Y, W, G) becomes one piece per cache line it touches,
 * in address order (for Y the source's pieces, then the destination's);
 * for Dinero, so does an instruction's access that crosses a line.
 */
#include "export.h"
#include "trace/accesses.h"
#include "line_buf.h"

#include <stdlib.h>

struct exporter {
    export_options opt;
    line_buf lines;
    memtap_event held;           /* an L that an S may turn into an M */
    int holding;
};

exporter *exporter_create(const export_options *opt, FILE *out)
{
    exporter *x = calloc(1, sizeof *x);
    if (!x)
        return NULL;
    if (line_buf_init(&x->lines, out) != 0) {
        free(x);
        return NULL;
    }
    x->opt = *opt;
    return x;
}

/* A Dinero IV line: "r addr size" or "w addr size", both in hex (as its
 * reader takes them). */
static void din_line(exporter *x, char label, uint64_t addr, uint64_t size)
{
    char *o = line_start(&x->lines); /* at most 36 bytes */
    o[0] = label;
    o[1] = ' ';
    o = hex_at(o + 2, addr, 1);
    *o++ = ' ';
    o = hex_at(o, size, 1);
    *o++ = '\n';
    line_end(&x->lines, o);
}

/* One piece, in the chosen format; kind is 'L', 'S' or 'M'. */
static void piece(exporter *x, char kind, uint64_t addr, uint64_t size)
{
    if (x->opt.format == EXPORT_LACKEY) {
        lackey_line(&x->lines, kind, addr, size);
    } else {
        if (kind != 'S')
            din_line(x, 'r', addr, size);
        if (kind != 'L')
            din_line(x, 'w', addr, size);
    }
}

/* [addr, addr+size) as pieces that each stay inside one cache line (one
 * piece when `whole`). */
static void pieces(exporter *x, char kind, uint64_t addr, uint64_t size,
                   int whole)
{
    if (whole || size == 0) {
        piece(x, kind, addr, size);
        return;
    }
    while (size > 0) {
        uint64_t n = trace_line_piece(addr, size, x->opt.line);
        piece(x, kind, addr, n);
        addr += n;
        size -= n;
    }
}

/* An instruction's access: as it is for Lackey (its lines are per
 * instruction), split at cache lines for Dinero. */
static void insn_access(exporter *x, const memtap_record *r, char kind)
{
    pieces(x, kind, r->addr, r->size, x->opt.format == EXPORT_LACKEY);
}

static void release(exporter *x)
{
    if (x->holding)
        insn_access(x, &x->held.rec, 'L');
    x->holding = 0;
}

void exporter_event(exporter *x, const memtap_event *ev)
{
    const memtap_record *r = &ev->rec;
    if (x->holding && r->kind == MEMTAP_EV_STORE && ev->tid == x->held.tid &&
        r->pc == x->held.rec.pc && r->addr == x->held.rec.addr &&
        r->size == x->held.rec.size) {
        x->holding = 0;
        insn_access(x, r, 'M');
        return;
    }
    release(x);
    if (r->kind == MEMTAP_EV_LOAD) { /* a store of it may follow: M */
        x->held = *ev;
        x->holding = 1;
        return;
    }
    if (r->kind == MEMTAP_EV_STORE) {
        insn_access(x, r, 'S');
        return;
    }
    /* block operations; heap, module and thread events have no line */
    int whole = x->opt.format == EXPORT_LACKEY && x->opt.whole_blocks;
    trace_access a[2];
    int n = trace_record_accesses(r, a);
    for (int i = 0; i < n; i++)
        pieces(x, a[i].write ? 'S' : 'L', a[i].addr, a[i].size, whole);
}

void exporter_run(exporter *x, const memtap_record *recs, size_t n,
                  uint32_t tid)
{
    for (size_t i = 0; i < n; i++) {
        memtap_event ev = { recs[i], tid };
        exporter_event(x, &ev);
    }
}

void exporter_finish(exporter *x)
{
    if (!x)
        return;
    release(x);
    line_buf_free(&x->lines);
    free(x);
}

static int tool_run(void *x, const memtap_record *recs, size_t n, uint32_t tid)
{
    exporter_run(x, recs, n, tid);
    return 0;
}

static int tool_finish(void *x, int status)
{
    exporter_finish(x);
    return status;
}

trace_tool exporter_tool(exporter *x)
{
    return (trace_tool){ .self = x, .run = tool_run, .finish = tool_finish };
}
