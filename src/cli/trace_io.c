/*
 * trace_io.c - what the commands that read a trace share: opening it (a
 * clear message for a file that is not one), their output file, the
 * end of a walk (what the trace lacks), the --format names, and the whole
 * trace rendered as text (show, run --text).
 */
#include "cli.h"
#include "trace/tool.h"
#include "report/parent.h"
#include "symbols/alloc_stacks.h"
#include "symbols/namer.h"
#include "symbols/symbolizer.h"
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

int cli_parse_format(const char *s)
{
    if (strcmp(s, "madt") == 0)
        return RENDER_MADT;
    if (strcmp(s, "lackey") == 0)
        return RENDER_LACKEY;
    if (strcmp(s, "csv") == 0)
        return RENDER_CSV;
    return -1;
}

int cli_walk_done(const char *path, const memtap_trace *t, int rc,
                  FILE *out)
{
    int status = 0;
    if (rc < 0)
        status = cli_error(path, "%s", memtap_status_string(rc));
    if (fflush(out) != 0 || ferror(out))
        status = cli_error("output", "%s", strerror(errno));
    cli_report_health(path, t, 1, NULL);
    return status;
}

FILE *cli_output_open(const char *path)
{
    FILE *out = path ? fopen(path, "w") : stdout;
    if (!out)
        cli_error(path, "%s", strerror(errno));
    return out;
}

int cli_output_close(FILE *out, const char *path, int rc)
{
    if (out != stdout && fclose(out) != 0)
        rc = cli_error(path, "%s", strerror(errno));
    return rc;
}

/* What --tid and --seq selected: every trace the command opens walks it. */
enum { MAX_TIDS = 64 };
static uint32_t selected_tids[MAX_TIDS];
static trace_selection selection = { .tids = selected_tids, .seq_hi = UINT64_MAX };
static int selecting;

/* --object: the object's name, and what names the trace's addresses as
 * the walk goes (a namer of its own, which learns every heap event). */
static struct {
    const char *name;
    symbolizer *sym;
    namer *names;
} object;

/* Whether the data at addr is object.name's. */
static int is_object(uint64_t addr)
{
    char text[1024];
    data_name d;
    namer_data(object.names, addr, &d);
    if (d.kind == DATA_HEAP) {
        symbolizer_site_text(object.sym, &d.block, text, sizeof text);
        if (strcmp(text, object.name) == 0)
            return 1;
    }
    namer_object_text(object.names, &d, text, sizeof text);
    return strcmp(text, object.name) == 0;
}

static int keep_object(void *arg, const memtap_record *r, uint32_t tid)
{
    (void)arg;
    (void)tid;
    if (memtap_kind_is_heap(r->kind)) {
        namer_learn(object.names, r, NULL);
        return 0;
    }
    return memtap_kind_is_access(r->kind) &&
           (is_object(r->addr) ||
            (r->kind == MEMTAP_EV_COPY && is_object(memtap_copy_source(r))));
}

static void keep_begin(void *arg)
{
    (void)arg;
    namer_destroy(object.names);
    object.names = namer_create(object.sym, 0);
}

static void object_done(void)
{
    namer_destroy(object.names);
    symbolizer_destroy(object.sym);
}

/* --tid's comma-separated thread ids into the selection; 0 when the
 * list is well formed (no empty item, a trailing comma included). */
static int parse_tids(const char *arg)
{
    const char *p = arg;
    for (;;) {
        char part[24];
        size_t len = strcspn(p, ",");
        uint64_t tid;
        if (len == 0 || len >= sizeof part || selection.ntids == MAX_TIDS)
            return -1;
        memcpy(part, p, len);
        part[len] = 0;
        if (cli_parse_u64(part, 10, &tid) || tid > UINT32_MAX)
            return -1;
        selected_tids[selection.ntids++] = (uint32_t)tid;
        if (!p[len])
            return 0;
        p += len + 1;
    }
}

/* --seq's A-B, A-, -B or N into the selection; 0 when well formed. */
static int parse_seq(const char *arg)
{
    const char *dash = strchr(arg, '-');
    char lo[24] = "", hi[24] = "";
    size_t llen = dash ? (size_t)(dash - arg) : strlen(arg);
    size_t hlen = dash ? strlen(dash + 1) : 0;
    uint64_t a = 0, b = UINT64_MAX;
    if (llen >= sizeof lo || hlen >= sizeof hi || (!llen && !hlen))
        return -1;
    memcpy(lo, arg, llen);
    if (dash)
        memcpy(hi, dash + 1, hlen);
    if ((llen && cli_parse_u64(lo, 10, &a)) || (hlen && cli_parse_u64(hi, 10, &b)))
        return -1;
    if (!dash)
        b = a;
    if (a > b)
        return -1;
    selection.seq_lo = a;
    selection.seq_hi = b;
    return 0;
}

int cli_selection_option(int c, const char *arg)
{
    if (c == CLI_OPT_ALLOC_WRAPPER) {
        if (!*arg)
            return cli_bad_option("--alloc-wrapper", "a function, not ''");
        if (alloc_stacks_add_wrapper(arg))
            return cli_error("--alloc-wrapper", "out of memory");
        return 0;
    }
    if (c == CLI_OPT_OBJECT) {
        if (!*arg)
            return cli_bad_option("--object", "a name, not ''");
        object.name = arg;
    } else if (c == CLI_OPT_TID) {
        if (parse_tids(arg))
            return cli_bad_option("--tid", "'%s' is not a list of thread ids (at most 64)", arg);
    } else if (parse_seq(arg)) {
        return cli_bad_option("--seq", "'%s' is not A-B, A-, -B or N (sequence numbers, A <= B)",
                              arg);
    }
    selecting = 1;
    return 0;
}

/* The format number in the header of the trace at path (0 unreadable). */
static uint32_t file_version(const char *path)
{
    unsigned char head[12]; /* the magic, then the format (memtap/trace.h) */
    uint32_t version = 0;
    FILE *f = fopen(path, "rb");
    if (f && fread(head, 1, sizeof head, f) == sizeof head)
        memcpy(&version, head + 8, sizeof version);
    if (f)
        fclose(f);
    return version;
}

const char *cli_selection_text(char *buf, size_t cap)
{
    if (!selecting)
        return NULL;
    size_t at = 0;
    buf[0] = 0;
    for (size_t i = 0; i < selection.ntids && at < cap; i++)
        at += (size_t)snprintf(buf + at, cap - at, "%s%" PRIu32,
                               i ? ", " : "threads ", selected_tids[i]);
    if (at < cap && (selection.seq_lo != 0 || selection.seq_hi != UINT64_MAX)) {
        at += (size_t)snprintf(buf + at, cap - at, "%sevents %" PRIu64, at ? "; " : "",
                               selection.seq_lo);
        if (at < cap && selection.seq_hi != UINT64_MAX)
            at += (size_t)snprintf(buf + at, cap - at, " to %" PRIu64, selection.seq_hi);
        else if (at < cap)
            at += (size_t)snprintf(buf + at, cap - at, " on");
    }
    if (at < cap && object.name)
        snprintf(buf + at, cap - at, "%sthe object %s", at ? "; " : "", object.name);
    return buf;
}

int cli_open_trace(const char *path, memtap_trace **t)
{
    int rc = memtap_trace_open(path, t);
    if (rc == MEMTAP_E_IO)
        return cli_error(path, "%s", strerror(errno));
    if (rc == MEMTAP_E_VERSION)
        return cli_error(path, "trace format %" PRIu32 ", and this memtap reads "
                               "formats %u to %u", file_version(path),
                         MEMTAP_TRACE_VERSION_MIN, MEMTAP_TRACE_VERSION);
    if (rc != MEMTAP_OK)
        return cli_error(path, "%s", memtap_status_string(rc));
    int status = cli_select_trace(path, *t);
    if (status) {
        memtap_trace_close(*t);
        *t = NULL;
    }
    return status;
}

int cli_select_trace(const char *path, memtap_trace *t)
{
    if (selecting && object.name && !object.sym) {
        if (symbolizer_create(t, NULL, &object.sym) != MEMTAP_OK ||
            !(object.names = namer_create(object.sym, 0)))
            return cli_error(path, "out of memory");
        atexit(object_done);
        selection.keep = keep_object;
        selection.keep_begin = keep_begin;
    }
    if (selecting)
        trace_select(t, &selection);
    return 0;
}

const char *cli_selected_object(void)
{
    return object.name;
}

static void learn(void *r, const memtap_event *ev) { renderer_learn(r, ev); }

/* A forked child's trace names blocks its parent allocated. */
static void learn_parent(const memtap_trace *t, renderer *r)
{
    if (parent_replay(t, learn, r) != 0) {
        char parent[4096];
        cli_info_value(t, "parent_trace", parent, sizeof parent);
        fprintf(stderr, "memtap: warning: %s: parent trace unreadable; "
                        "blocks inherited at fork stay unnamed\n", parent);
    }
}

int cli_render_trace(const char *path, const render_options *opt, FILE *out,
                     int quiet)
{
    memtap_trace *t;
    if (cli_open_trace(path, &t))
        return 1;
    symbolizer *sym = NULL;
    int rc = symbolizer_create(t, stderr, &sym);
    renderer *r = rc == MEMTAP_OK ? renderer_create(sym, opt, out) : NULL;
    if (!r) {
        symbolizer_destroy(sym);
        memtap_trace_close(t);
        return cli_error(path, "out of memory");
    }
    learn_parent(t, r);
    renderer_begin(r);
    cli_progress p;
    cli_progress_start(&p, "show", memtap_trace_get_health(t)->events, out,
                       quiet);
    trace_tool tool = renderer_tool(r);
    rc = trace_tools_walk(t, &tool, 1, cli_progress_records, &p);
    cli_progress_end(&p);
    int status = cli_walk_done(path, t, rc, out);
    renderer_destroy(r);
    symbolizer_destroy(sym);
    memtap_trace_close(t);
    return status;
}
