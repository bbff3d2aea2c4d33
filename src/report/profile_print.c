/*
 * profile_print.c - a report's profile as text for a terminal and as one
 * JSON object for programs and the HTML page (profile_print.h).
 */
#include "report/profile_print.h"

#include "report/json.h"

#include <inttypes.h>
#include <stddef.h>
#include <string.h>

static const char kind_letters[PROF_KINDS] = { 'L', 'S', 'Y', 'W', 'G' };

static double share(uint64_t part, uint64_t all)
{
    return all ? 100.0 * (double)part / (double)all : 0.0;
}

static unsigned popcount(uint64_t x) { return (unsigned)__builtin_popcountll(x); }

static void pattern_text(const profile_object *o, char *buf, size_t cap)
{
    if (o->pattern == PATTERN_STRIDED)
        snprintf(buf, cap, "strided %+" PRId64, o->stride);
    else
        snprintf(buf, cap, "%s", profile_pattern_name(o->pattern));
}

static void text_objects(const profile *p, FILE *o, size_t top)
{
    fprintf(o, "\nHottest objects (heap blocks by allocation site)\n"
               "%10s %6s %9s %9s %9s %11s %11s  %-14s %s\n",
            "accesses", "%", "loads", "stores", "blocks", "bytes read",
            "written", "pattern", "object");
    for (size_t i = 0; i < p->nobjects && i < top; i++) {
        const profile_object *x = &p->objects[i];
        if (!x->accesses)
            break;
        char pattern[32];
        pattern_text(x, pattern, sizeof pattern);
        fprintf(o, "%10" PRIu64 " %5.1f%% %9" PRIu64 " %9" PRIu64 " %9" PRIu64
                   " %11" PRIu64 " %11" PRIu64 "  %-14s %s %s",
                x->accesses, share(x->accesses, p->accesses), x->n[PROF_L],
                x->n[PROF_S], x->n[PROF_Y] + x->n[PROF_W] + x->n[PROF_G],
                x->bytes_read, x->bytes_written, pattern, x->name, x->region);
        if (x->uaf)
            fprintf(o, " (%" PRIu64 " after free)", x->uaf);
        fputc('\n', o);
    }
}

static void text_insns(const profile *p, FILE *o, size_t top)
{
    fprintf(o, "\nHottest instructions\n%10s %6s  %-5s %-28s %-28s %s\n",
            "accesses", "%", "kinds", "instruction", "line", "object (last)");
    for (size_t i = 0; i < p->ninsns && i < top; i++) {
        const profile_insn *x = &p->insns[i];
        char kinds[PROF_KINDS + 1];
        size_t n = 0;
        for (int k = 0; k < PROF_KINDS; k++)
            if (x->n[k])
                kinds[n++] = kind_letters[k];
        kinds[n] = '\0';
        fprintf(o, "%10" PRIu64 " %5.1f%%  %-5s %-28s %-28s %s\n",
                x->accesses, share(x->accesses, p->accesses), kinds, x->name,
                x->line ? x->line : "-", p->objects[x->object].name);
    }
}

static void text_chunks(const profile *p, FILE *o, size_t top)
{
    if (!p->nchunks)
        return;
    fprintf(o, "\nHottest %d-byte chunks\n%10s %6s  %-18s %s\n",
            PROFILE_CHUNK, "accesses", "%", "address", "chunk");
    for (size_t i = 0; i < p->nchunks && i < top; i++) {
        const profile_chunk *k = &p->chunks[i];
        fprintf(o, "%10" PRIu64 " %5.1f%%  0x%-16" PRIx64 " %s\n", k->accesses,
                share(k->accesses, p->accesses), k->addr, k->name);
    }
}

static void text_uaf(const profile *p, FILE *o, size_t top)
{
    if (!p->uaf)
        return;
    fprintf(o, "\nUses after free: %" PRIu64 " accesses to freed blocks\n",
            p->uaf);
    size_t shown = 0;
    for (size_t i = 0; i < p->ninsns && shown < top; i++) {
        const profile_insn *x = &p->insns[i];
        if (!x->uaf)
            continue;
        shown++;
        fprintf(o, "%10" PRIu64 "  %-28s %-28s %s\n", x->uaf, x->name,
                x->line ? x->line : "-", p->objects[x->object].name);
    }
}

static void text_heap(const profile *p, FILE *o, size_t top)
{
    const profile_heap *h = &p->heap;
    fprintf(o, "\nHeap: %" PRIu64 " allocations (%" PRIu64 " bytes), %" PRIu64
               " frees, %" PRIu64 " temporary (freed before the next "
               "allocation)\n      peak %" PRIu64 " bytes live (event %"
               PRIu64 "); not freed at the end: %" PRIu64 " blocks, %" PRIu64
               " bytes\n",
            h->allocs, h->alloc_bytes, h->frees, h->temporary, h->peak_bytes,
            h->peak_event, h->live, h->live_bytes);
    if (h->mappings)
        fprintf(o, "      mappings: %" PRIu64 " (%" PRIu64 " bytes)\n",
                h->mappings, h->mapped_bytes);
    fprintf(o, "\nAllocation sites\n%8s %12s %12s %9s %9s %12s  %s\n",
            "allocs", "bytes", "peak bytes", "temporary", "not freed",
            "bytes", "site");
    size_t shown = 0;
    for (size_t i = 0; i < p->nobjects && shown < top; i++) {
        const profile_object *x = &p->objects[i];
        if (!x->heap || !x->allocs)
            continue;
        shown++;
        fprintf(o, "%8" PRIu64 " %12" PRIu64 " %12" PRIu64 " %9" PRIu64
                   " %9" PRIu64 " %12" PRIu64 "  %s\n",
                x->allocs, x->alloc_bytes, x->peak_bytes, x->temporary,
                x->live, x->live_bytes, x->name);
    }
}

/* The sizes of a stack's allocations: "16-31 x100, 64-127 x7". */
static void text_sizes(FILE *o, const heap_stack *x)
{
    const char *sep = "";
    for (unsigned i = 0; i < HEAP_STACK_SIZES; i++) {
        if (!x->sizes[i])
            continue;
        uint64_t lo = i ? 1ull << i : 0, hi = (2ull << i) - 1;
        fprintf(o, "%s%" PRIu64 "-%" PRIu64 " x%" PRIu64, sep, lo, hi,
                x->sizes[i]);
        sep = ", ";
    }
}

/* heaptrack's questions, stack by stack: the stacks with the most
 * allocations, each with its frames. */
static void text_stacks(const profile *p, FILE *o, size_t top)
{
    const heap_stacks *s = &p->stacks;
    if (!s->n || (s->n == 1 && !s->v[0].key))
        return; /* a trace without stacks */
    fprintf(o, "\nAllocation call stacks (the %zu with the most allocations; "
               "\"at peak\": bytes live when the heap peaked)\n",
            s->n < top ? s->n : top);
    for (size_t i = 0; i < s->n && i < top; i++) {
        const heap_stack *x = &s->v[i];
        fprintf(o, "%8" PRIu64 " allocations, %" PRIu64 " bytes, %" PRIu64
                   " temporary, %" PRIu64 " at peak, not freed %" PRIu64
                   " (%" PRIu64 " bytes), %" PRIu64 " accesses; sizes ",
                x->allocs, x->bytes, x->temporary, x->at_peak, x->live,
                x->live_bytes, x->accesses);
        text_sizes(o, x);
        fputc('\n', o);
        if (!x->nframes)
            fputs("           (no call stack)\n", o);
        for (uint32_t f = 0; f < x->nframes; f++)
            fprintf(o, "           %s\n", x->frames[f]);
    }
}

/* The field maps of the hottest sites that have one: which offsets of
 * their blocks the program reads and writes, and how much of a block it
 * never touches. */
static void text_fields(const profile *p, FILE *o, size_t top)
{
    size_t shown = 0;
    for (size_t i = 0; i < p->nobjects && shown < top; i++) {
        const profile_object *x = &p->objects[i];
        if (!x->heap || !x->fields)
            continue;
        if (!shown++)
            fprintf(o, "\nFields of the hottest allocation sites (offsets in "
                       "their blocks, as the instructions access them)\n");
        fprintf(o, "  %s%s%s%s: blocks up to %" PRIu64 " bytes, %" PRIu64
                   " of them never accessed%s%s%s\n%12s %6s %12s %12s %8s %5s %8s%s\n",
                x->name, x->type ? " (" : "", x->type ? x->type : "", x->type ? ")" : "",
                x->block_size, x->untouched, x->untouched_members ? " (" : "",
                x->untouched_members ? x->untouched_members : "",
                x->untouched_members ? ")" : "", "offset", "size", "loads", "stores",
                "threads", "group", "when", x->type ? "  field" : "");
        for (uint32_t k = 0; k < x->nfields; k++) {
            const profile_field *f = &x->fields[k];
            char off[16], when[16];
            snprintf(off, sizeof off, "+%" PRIu32, f->offset);
            snprintf(when, sizeof when, "%u-%u%%", f->first_bin * 100 / PROFILE_BINS,
                     (f->last_bin + 1) * 100 / PROFILE_BINS);
            fprintf(o, "%12s %6" PRIu32 " %12" PRIu64 " %12" PRIu64 " %8u %5s %8s%s%s\n",
                    off, f->size, f->loads, f->stores, popcount(f->threads),
                    f->hot ? "hot" : "cold", when, f->name ? "  " : "", f->name ? f->name : "");
        }
    }
}

static void text_threads(const profile *p, FILE *o, size_t top)
{
    if (p->nthreads < 2)
        return;
    fprintf(o, "\nThreads\n%10s %12s %12s\n", "tid", "events", "accesses");
    for (size_t i = 0; i < p->nthreads; i++)
        fprintf(o, "%10" PRIu32 " %12" PRIu64 " %12" PRIu64 "\n",
                p->threads[i].tid, p->threads[i].events,
                p->threads[i].accesses);
    fprintf(o, "\nObjects several threads touch (a heap site: per block, "
               "the most threads and writers of one, and how many were shared)\n"
               "%10s %8s %8s %8s  %s\n", "accesses", "threads", "writers", "blocks",
            "object");
    size_t shown = 0;
    for (size_t i = 0; i < p->nobjects && shown < top; i++) {
        const profile_object *x = &p->objects[i];
        if (x->heap ? !x->shared_blocks : popcount(x->threads) < 2)
            continue;
        shown++;
        if (x->heap)
            fprintf(o, "%10" PRIu64 " %8u %8u %8" PRIu64 "  %s\n", x->accesses,
                    x->block_threads, x->block_writers, x->shared_blocks, x->name);
        else
            fprintf(o, "%10" PRIu64 " %8u %8u %8s  %s\n", x->accesses,
                    popcount(x->threads), popcount(x->writers), "-", x->name);
    }
    if (!shown)
        fputs("  (none)\n", o);
}

void profile_print_text(const profile *p, const profile_meta *m, FILE *o,
                        size_t top)
{
    fprintf(o, "memtap report: %s (pid %" PRIu32 "): %" PRIu64 " events, %"
               PRIu64 " accesses (",
            m->program, m->pid, p->events, p->accesses);
    for (int k = 0; k < PROF_KINDS; k++)
        fprintf(o, "%s%c %" PRIu64, k ? ", " : "", kind_letters[k], p->n[k]);
    fputs(")\n", o);
    if (m->selection)
        fprintf(o, "selection: the accesses of %s (the heap's tables and the "
                   "time line: the whole trace's)\n", m->selection);
    if (!m->complete)
        fputs("warning: the trace may be incomplete (see the warnings "
              "above): these counts are a lower bound\n", o);
    text_objects(p, o, top);
    text_insns(p, o, top);
    text_chunks(p, o, top);
    text_uaf(p, o, top);
    text_heap(p, o, top);
    text_stacks(p, o, top);
    text_fields(p, o, top < 5 ? top : 5);
    text_threads(p, o, top);
}

static void json_counts(FILE *o, const uint64_t *n)
{
    for (int k = 0; k < PROF_KINDS; k++)
        fprintf(o, ", \"%c\": %" PRIu64, kind_letters[k], n[k]);
}

static void json_stack(FILE *o, const heap_stack *x)
{
    fprintf(o, "{\"stack\": %" PRIu32 ", ", x->key);
    json_addr(o, "site", x->site);
    fprintf(o, ", \"allocs\": %" PRIu64 ", \"alloc_bytes\": %" PRIu64
               ", \"frees\": %" PRIu64 ", \"temporary\": %" PRIu64
               ", \"at_peak\": %" PRIu64 ", \"not_freed\": %" PRIu64
               ", \"not_freed_bytes\": %" PRIu64 ", \"accesses\": %" PRIu64
               ", \"sizes\": {",
            x->allocs, x->bytes, x->frees, x->temporary, x->at_peak, x->live,
            x->live_bytes, x->accesses);
    const char *sep = "";
    for (unsigned i = 0; i < HEAP_STACK_SIZES; i++)
        if (x->sizes[i]) {
            fprintf(o, "%s\"%" PRIu64 "\": %" PRIu64, sep,
                    (uint64_t)(i ? 1ull << i : 0), x->sizes[i]);
            sep = ", ";
        }
    fputs("}, \"frames\": [", o);
    for (uint32_t f = 0; f < x->nframes; f++) {
        fputs(f ? ", " : "", o);
        json_str(o, x->frames[f]);
    }
    fputs("]}", o);
}

static void json_object(FILE *o, const profile_object *x)
{
    fputs("{\"name\": ", o);
    json_str(o, x->name);
    fputs(", \"region\": ", o);
    json_str(o, x->region);
    fprintf(o, ", \"heap\": %s, \"accesses\": %" PRIu64, x->heap ? "true" : "false",
            x->accesses);
    json_counts(o, x->n);
    fprintf(o, ", \"bytes_read\": %" PRIu64 ", \"bytes_written\": %" PRIu64
               ", \"pattern\": \"%s\", \"stride\": %" PRId64
               ", \"threads\": %u, \"writers\": %u, \"after_free\": %" PRIu64 ", ",
            x->bytes_read, x->bytes_written, profile_pattern_name(x->pattern),
            x->pattern == PATTERN_STRIDED ? x->stride : 0,
            x->heap ? x->block_threads : popcount(x->threads),
            x->heap ? x->block_writers : popcount(x->writers), x->uaf);
    if (x->heap) /* threads and writers above: the most of one block */
        fprintf(o, "\"shared_blocks\": %" PRIu64 ", \"site_threads\": %u, ",
                x->shared_blocks, popcount(x->threads));
    json_addr(o, x->heap ? "offset_lo" : "lo", x->lo);
    fputs(", ", o);
    json_addr(o, x->heap ? "offset_hi" : "hi", x->hi);
    if (x->heap) {
        fputs(", ", o);
        json_addr(o, "site", x->site);
        fprintf(o, ", \"allocs\": %" PRIu64 ", \"alloc_bytes\": %" PRIu64
                   ", \"frees\": %" PRIu64 ", \"temporary\": %" PRIu64
                   ", \"peak_bytes\": %" PRIu64 ", \"not_freed\": %" PRIu64
                   ", \"not_freed_bytes\": %" PRIu64,
                x->allocs, x->alloc_bytes, x->frees, x->temporary,
                x->peak_bytes, x->live, x->live_bytes);
        fputs(", \"fields\": ", o);
        if (!x->fields)
            fputs("null", o);
        for (uint32_t k = 0; k < x->nfields; k++) {
            const profile_field *f = &x->fields[k];
            fprintf(o, "%s{\"offset\": %" PRIu32 ", \"size\": %" PRIu32
                       ", \"loads\": %" PRIu64 ", \"stores\": %" PRIu64
                       ", \"threads\": %u, \"hot\": %s, \"first_bin\": %u"
                       ", \"last_bin\": %u, ", k ? ", " : "[", f->offset, f->size,
                    f->loads, f->stores, popcount(f->threads), f->hot ? "true" : "false",
                    f->first_bin, f->last_bin);
            json_str_or_null(o, "name", f->name);
            fputc('}', o);
        }
        if (x->fields) {
            fprintf(o, "], \"block_size\": %" PRIu64 ", \"untouched_bytes\": %" PRIu64
                       ", ", x->block_size, x->untouched);
            json_str_or_null(o, "type", x->type);
            fputs(", ", o);
            json_str_or_null(o, "untouched_members", x->untouched_members);
        }
    }
    fputc('}', o);
}

static void json_insn(FILE *o, const profile *p, const profile_insn *x)
{
    fputc('{', o);
    json_addr(o, "pc", x->pc);
    fputs(", \"name\": ", o);
    json_str(o, x->name);
    fputs(", \"line\": ", o);
    if (x->line)
        json_str(o, x->line);
    else
        fputs("null", o);
    fprintf(o, ", \"accesses\": %" PRIu64, x->accesses);
    json_counts(o, x->n);
    fprintf(o, ", \"after_free\": %" PRIu64 ", \"object\": ", x->uaf);
    json_str(o, p->objects[x->object].name);
    fputc('}', o);
}

static void json_series(FILE *o, const char *key, const profile *p,
                        size_t field_offset)
{
    fprintf(o, "\"%s\": [", key);
    for (size_t i = 0; i < PROFILE_BINS; i++)
        fprintf(o, "%s%" PRIu64, i ? ", " : "",
                *(const uint64_t *)((const char *)&p->bins[i] + field_offset));
    fputc(']', o);
}

static void json_timeline(FILE *o, const profile *p)
{
    fprintf(o, "\"timeline\": {\"bins\": %d, \"duration_us\": %" PRIu64 ", ",
            PROFILE_BINS, p->duration_us);
    json_series(o, "events", p, offsetof(profile_bin, events));
    fputs(", ", o);
    for (int k = 0; k < PROF_KINDS; k++) {
        char key[2] = { kind_letters[k], 0 };
        json_series(o, key, p, offsetof(profile_bin, n) + k * sizeof(uint64_t));
        fputs(", ", o);
    }
    json_series(o, "allocs", p, offsetof(profile_bin, allocs));
    fputs(", ", o);
    json_series(o, "frees", p, offsetof(profile_bin, frees));
    fputs(", ", o);
    json_series(o, "live_bytes", p, offsetof(profile_bin, live_bytes));
    /* the first threads' accesses, each its own series */
    fputs(", \"threads\": [", o);
    for (size_t t = 0; t < p->nthreads && t < PROFILE_BIN_THREADS; t++) {
        fprintf(o, "%s{\"tid\": %" PRIu32 ", ", t ? ", " : "", p->threads[t].tid);
        json_series(o, "accesses", p, offsetof(profile_bin, thread_n) + t * sizeof(uint64_t));
        fputc('}', o);
    }
    fputs("]}", o);
}

static void json_heatmap(FILE *o, const profile *p, const profile_heatmap *m)
{
    fputs("{\"object\": ", o);
    if (m->object >= 0)
        json_str(o, p->objects[m->object].name);
    else
        fputs("null", o);
    fputs(", \"rows\": [", o);
    for (uint32_t r = 0; r < m->rows; r++) {
        fputs(r ? ", [" : "[", o);
        fprintf(o, "\"0x%" PRIx64 "\", \"0x%" PRIx64 "\"", m->row_lo[r],
                m->row_hi[r]);
        if (m->row_name[r]) { /* static data: the row's first byte's name */
            fputs(", ", o);
            json_str(o, m->row_name[r]);
        }
        fputc(']', o);
    }
    fputs("], \"cells\": [", o); /* [row, bin, count], non-zero ones */
    int first = 1;
    for (uint32_t r = 0; r < m->rows; r++)
        for (size_t c = 0; c < PROFILE_BINS; c++)
            if (m->cells[r][c]) {
                fprintf(o, "%s[%" PRIu32 ", %zu, %" PRIu64 "]",
                        first ? "" : ", ", r, c, m->cells[r][c]);
                first = 0;
            }
    fputs("]}", o);
}

void profile_print_json(const profile *p, const profile_meta *m, FILE *o)
{
    fputs("{\"trace\": ", o);
    json_str(o, m->path);
    fputs(", \"program\": ", o);
    json_str(o, m->program);
    fprintf(o, ", \"pid\": %" PRIu32 ", \"complete\": %s, \"events\": %" PRIu64
               ", \"accesses\": %" PRIu64 ", \"after_free\": %" PRIu64,
            m->pid, m->complete ? "true" : "false", p->events, p->accesses,
            p->uaf);
    fputs(", \"selection\": ", o);
    if (m->selection)
        json_str(o, m->selection);
    else
        fputs("null", o);
    fputs(", \"kinds\": {", o);
    for (int k = 0; k < PROF_KINDS; k++)
        fprintf(o, "%s\"%c\": %" PRIu64, k ? ", " : "", kind_letters[k], p->n[k]);
    const profile_heap *h = &p->heap;
    fprintf(o, "},\n\"heap\": {\"allocs\": %" PRIu64 ", \"alloc_bytes\": %" PRIu64
               ", \"frees\": %" PRIu64 ", \"temporary\": %" PRIu64
               ", \"peak_bytes\": %" PRIu64 ", \"peak_event\": %" PRIu64
               ", \"not_freed\": %" PRIu64 ", \"not_freed_bytes\": %" PRIu64
               ", \"mappings\": %" PRIu64 ", \"mapped_bytes\": %" PRIu64 "},\n",
            h->allocs, h->alloc_bytes, h->frees, h->temporary, h->peak_bytes,
            h->peak_event, h->live, h->live_bytes, h->mappings,
            h->mapped_bytes);
    fputs("\"objects\": [", o);
    for (size_t i = 0; i < p->nobjects; i++) {
        fputs(i ? ",\n " : "\n ", o);
        json_object(o, &p->objects[i]);
    }
    fputs("],\n\"stacks\": [", o);
    for (size_t i = 0; i < p->stacks.n; i++) {
        fputs(i ? ",\n " : "\n ", o);
        json_stack(o, &p->stacks.v[i]);
    }
    fputs("],\n\"instructions\": [", o);
    for (size_t i = 0; i < p->ninsns; i++) {
        fputs(i ? ",\n " : "\n ", o);
        json_insn(o, p, &p->insns[i]);
    }
    fputs("],\n\"chunks\": [", o);
    for (size_t i = 0; i < p->nchunks; i++) {
        const profile_chunk *k = &p->chunks[i];
        fputs(i ? ",\n {" : "\n {", o);
        json_addr(o, "address", k->addr);
        fputs(", \"name\": ", o);
        json_str(o, k->name);
        fputs(", \"object\": ", o);
        json_str(o, p->objects[k->object].name);
        fprintf(o, ", \"accesses\": %" PRIu64 "}", k->accesses);
    }
    fputs("],\n\"threads\": [", o);
    for (size_t i = 0; i < p->nthreads; i++)
        fprintf(o, "%s{\"tid\": %" PRIu32 ", \"events\": %" PRIu64
                   ", \"accesses\": %" PRIu64 "}",
                i ? ", " : "", p->threads[i].tid, p->threads[i].events,
                p->threads[i].accesses);
    fputs("],\n", o);
    json_timeline(o, p);
    fputs(",\n\"heatmaps\": [", o);
    for (size_t i = 0; i < p->nmaps; i++) {
        fputs(i ? ",\n " : "\n ", o);
        json_heatmap(o, p, &p->maps[i]);
    }
    fputs("]}\n", o);
}
