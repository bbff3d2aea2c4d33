/*
 * symbolizer.c - address-to-name lookups over the modules and memory
 * regions recorded in a trace.  Module ranges and regions are sorted arrays
 * searched by bisection; each module's ELF file is loaded on first use.
 *
 * One file: names of code (functions, lines, inlined frames, allocation
 * sites) and of data share the module table and its lazily loaded images.
 */
#define _GNU_SOURCE
#include "symbolizer.h"

#include "alloc_stacks.h"
#include "elfimage.h"
#include "sys/bisect.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

typedef struct sym_module {
    const memtap_module *m;
    const char *basename;
    char *region;        /* "[basename]" */
    elf_image *img;
    int tried;
    size_t same_as;      /* the first module of the same file (itself if
                            none before it): its image is shared */
} sym_module;

typedef struct range {
    uint64_t start, end;
    size_t index;        /* module, or region */
} range;

struct symbolizer {
    FILE *warn;
    sym_module *mods;
    size_t nmods;
    range *mod_ranges;
    size_t nmod_ranges;
    const range *last_range; /* module_at's last answer */
    range *regions;      /* from the maps snapshot */
    char **region_names;
    size_t nregions;
    alloc_stacks *stacks; /* the heap events' call stacks */
    const memtap_trace *trace;
    size_t maps_len;     /* of the maps snapshot the regions are from */
    int maps_read;       /* the regions are from it */
};

static int cmp_range(const void *a, const void *b)
{
    const range *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static const range *find_range(const range *r, size_t n, uint64_t addr)
{
    size_t lo = BISECT_AFTER(r, n, start, addr);
    return lo && addr < r[lo - 1].end ? &r[lo - 1] : NULL;
}

static char *bracketed(const char *name)
{
    char *s = NULL;
    if (asprintf(&s, "[%s]", name) < 0)
        return NULL;
    return s;
}

/* Orders modules by file (path, then build-id). */
static int cmp_file(const sym_module *x, const sym_module *y)
{
    int c = strcmp(x->m->path, y->m->path);
    if (!c)
        c = x->m->build_id_len < y->m->build_id_len ? -1
            : x->m->build_id_len > y->m->build_id_len;
    if (!c && x->m->build_id_len)
        c = memcmp(x->m->build_id, y->m->build_id, x->m->build_id_len);
    return c;
}

/* By file, then by position: the first of a file comes first. */
static int cmp_file_then_position(const void *a, const void *b)
{
    const sym_module *x = *(sym_module *const *)a, *y = *(sym_module *const *)b;
    int c = cmp_file(x, y);
    return c ? c : (x < y ? -1 : x > y);
}

/* Modules naming one file (loaded twice, or a crafted trace naming it a
 * thousand times) share one image: each file is read once. */
static int share_files(symbolizer *s)
{
    sym_module **order = malloc((s->nmods ? s->nmods : 1) * sizeof *order);
    if (!order)
        return MEMTAP_E_NOMEM;
    for (size_t i = 0; i < s->nmods; i++)
        order[i] = &s->mods[i];
    qsort(order, s->nmods, sizeof *order, cmp_file_then_position);
    for (size_t i = 0; i < s->nmods; i++)
        order[i]->same_as = i > 0 && cmp_file(order[i - 1], order[i]) == 0
                                ? order[i - 1]->same_as
                                : (size_t)(order[i] - s->mods);
    free(order);
    return MEMTAP_OK;
}

/* Takes the trace's modules: the first s->nmods known already (their
 * entries point at the trace's table again: it may have moved), the
 * others new; then the ranges of them all. */
static int add_modules(symbolizer *s, const memtap_trace *t)
{
    size_t n = memtap_trace_module_count(t), nr = 0, total_segs = 0;
    sym_module *mods = realloc(s->mods, (n ? n : 1) * sizeof *mods);
    if (!mods)
        return MEMTAP_E_NOMEM;
    s->mods = mods;
    memset(mods + s->nmods, 0, (n - s->nmods) * sizeof *mods);
    for (size_t i = 0; i < n; i++)
        total_segs += memtap_trace_module_at(t, i)->nsegs;
    free(s->mod_ranges);
    s->last_range = NULL;
    s->nmod_ranges = 0;
    s->mod_ranges = calloc(total_segs ? total_segs : 1, sizeof *s->mod_ranges);
    if (!s->mod_ranges)
        return MEMTAP_E_NOMEM;
    for (size_t i = 0; i < n; i++) {
        const memtap_module *m = memtap_trace_module_at(t, i);
        sym_module *sm = &s->mods[i];
        sm->m = m;
        for (size_t k = 0; k < m->nsegs; k++) {
            range *r = &s->mod_ranges[nr++];
            r->start = m->base + m->segs[k].vaddr;
            r->end = r->start + m->segs[k].memsz;
            r->index = i;
        }
        if (i < s->nmods)
            continue;
        s->nmods++;
        const char *slash = strrchr(m->path, '/');
        sm->basename = slash ? slash + 1 : m->path;
        if (sm->basename[0] == '[') {
            sm->region = strdup(sm->basename);
            sm->tried = 1; /* [vdso] and the like have no file */
        } else {
            sm->region = bracketed(sm->basename);
        }
        if (!sm->region)
            return MEMTAP_E_NOMEM;
    }
    s->nmod_ranges = nr;
    qsort(s->mod_ranges, nr, sizeof *s->mod_ranges, cmp_range);
    return share_files(s);
}

/* Parses the maps snapshot: "start-end perms offset dev inode [path]". */
static int add_regions(symbolizer *s, const char *maps)
{
    size_t cap = 0;
    for (const char *p = maps; *p;) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        unsigned long long a, b;
        int name_at = 0;
        char line[4096];
        if (len < sizeof line) {
            memcpy(line, p, len);
            line[len] = '\0';
            if (sscanf(line, "%llx-%llx %*s %*s %*s %*s %n", &a, &b,
                       &name_at) >= 2 && name_at > 0) {
                if (s->nregions == cap) {
                    cap = cap ? cap * 2 : 64;
                    range *r = realloc(s->regions, cap * sizeof *r);
                    char **nm = realloc(s->region_names, cap * sizeof *nm);
                    if (r)
                        s->regions = r;
                    if (nm)
                        s->region_names = nm;
                    if (!r || !nm)
                        return MEMTAP_E_NOMEM;
                }
                const char *path = line + name_at;
                const char *slash = strrchr(path, '/');
                const char *base = slash ? slash + 1 : path;
                char *name = *path == '[' ? strdup(path)
                             : *path    ? bracketed(base)
                                        : strdup("[anon]");
                if (!name)
                    return MEMTAP_E_NOMEM;
                s->regions[s->nregions] = (range){ a, b, s->nregions };
                s->region_names[s->nregions++] = name;
            }
        }
        if (!eol)
            break;
        p = eol + 1;
    }
    if (s->nregions)
        qsort(s->regions, s->nregions, sizeof *s->regions, cmp_range);
    return MEMTAP_OK;
}

/* The main thread's stack grows below the [stack] mapping the snapshot
 * saw, up to its limit (stack_limit in the trace; 0 or absent: as far as
 * the next mapping below): the region covers that whole range, so that a
 * deep frame is named [stack], not an absolute address. */
static void grow_stack(symbolizer *s, const memtap_trace *t)
{
    const char *v = memtap_trace_info(t, "stack_limit");
    uint64_t limit = v ? strtoull(v, NULL, 10) : 0;
    for (size_t i = 0; i < s->nregions; i++) {
        range *r = &s->regions[i];
        if (strcmp(s->region_names[r->index], "[stack]") != 0)
            continue;
        uint64_t floor = i ? s->regions[i - 1].end : 0;
        uint64_t low = limit && r->end - floor > limit ? r->end - limit : floor;
        if (low < r->start)
            r->start = low;
    }
}

int symbolizer_refresh(symbolizer *s)
{
    const memtap_trace *t = s->trace;
    int rc = MEMTAP_OK, changed = 0;
    if (memtap_trace_module_count(t) != s->nmods || !s->mod_ranges) {
        changed = 1;
        rc = add_modules(s, t);
    }
    const char *maps = memtap_trace_maps(t);
    size_t len = strlen(maps);
    if (rc == MEMTAP_OK && (len != s->maps_len || !s->maps_read)) {
        changed = 1;
        for (size_t i = 0; i < s->nregions; i++)
            free(s->region_names[i]);
        s->nregions = 0;
        s->maps_len = len;
        s->maps_read = 1;
        rc = add_regions(s, maps);
        if (rc == MEMTAP_OK)
            grow_stack(s, t);
    }
    return rc < 0 ? rc : changed;
}

int symbolizer_create(const memtap_trace *t, FILE *warn, symbolizer **out)
{
    *out = NULL;
    symbolizer *s = calloc(1, sizeof *s);
    if (!s)
        return MEMTAP_E_NOMEM;
    s->warn = warn;
    s->trace = t;
    int rc = symbolizer_refresh(s) < 0 ? MEMTAP_E_NOMEM : MEMTAP_OK;
    if (rc == MEMTAP_OK && !(s->stacks = alloc_stacks_create(t, s)))
        rc = MEMTAP_E_NOMEM;
    if (rc != MEMTAP_OK) {
        symbolizer_destroy(s);
        return rc;
    }
    *out = s;
    return MEMTAP_OK;
}

void symbolizer_destroy(symbolizer *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nmods; i++) {
        if (s->mods[i].same_as == i)
            elf_image_close(s->mods[i].img);
        free(s->mods[i].region);
    }
    for (size_t i = 0; i < s->nregions; i++)
        free(s->region_names[i]);
    free(s->region_names);
    free(s->regions);
    free(s->mod_ranges);
    free(s->mods);
    alloc_stacks_destroy(s->stacks);
    free(s);
}

static void warn(symbolizer *s, const char *path, const char *why)
{
    if (s->warn)
        fprintf(s->warn, "memtap: warning: %s: %s; its addresses stay raw\n",
                path, why);
}

/* The module's ELF image, loaded and checked on first use. */
static elf_image *module_image(symbolizer *s, sym_module *sm)
{
    if (sm->tried)
        return sm->img;
    sm->tried = 1;
    sym_module *first = &s->mods[sm->same_as];
    if (first != sm) {
        sm->img = module_image(s, first);
        return sm->img;
    }
    elf_image *img;
    int rc = elf_image_open(sm->m->path, &img);
    if (rc != ELF_OK) {
        warn(s, sm->m->path, elf_strerror(rc));
        return NULL;
    }
    size_t len;
    const uint8_t *id = elf_image_build_id(img, &len);
    if (sm->m->build_id_len &&
        (!id || len != sm->m->build_id_len ||
         memcmp(id, sm->m->build_id, len) != 0)) {
        warn(s, sm->m->path,
             "build-id differs from the traced binary (rebuilt since?)");
        elf_image_close(img);
        return NULL;
    }
    sm->img = img;
    return img;
}

/* The module holding addr; the last range found is tried first (the
 * answer while addr is in it and before the next range starts: ranges of
 * a crafted trace may overlap). */
static sym_module *module_at(symbolizer *s, uint64_t addr)
{
    const range *r = s->last_range;
    if (!r || addr - r->start >= r->end - r->start ||
        (r + 1 < s->mod_ranges + s->nmod_ranges && addr >= r[1].start)) {
        r = find_range(s->mod_ranges, s->nmod_ranges, addr);
        if (r)
            s->last_range = r;
    }
    return r ? &s->mods[r->index] : NULL;
}

unsigned symbolizer_site_how(uint8_t kind)
{
    return kind == MEMTAP_EV_MMAP || kind == MEMTAP_EV_MREMAP ? 3
           : kind == MEMTAP_EV_CALLOC                        ? 1
           : kind == MEMTAP_EV_REALLOC                       ? 2
                                                             : 0;
}

void symbolizer_site_text(symbolizer *s, const heap_block *b, char *buf,
                          size_t cap)
{
    static const char *const how[] = { "malloc", "calloc", "realloc", "mmap" };
    char code[256];
    symbolizer_code(s, b->site, code, sizeof code);
    snprintf(buf, cap, "%s@%s", how[symbolizer_site_how(b->kind)], code);
}

void symbolizer_code(symbolizer *s, uint64_t pc, char *buf, size_t cap)
{
    sym_module *sm = module_at(s, pc);
    if (!sm) {
        snprintf(buf, cap, "0x%" PRIx64, pc);
        return;
    }
    uint64_t link = pc - sm->m->base;
    elf_image *img = module_image(s, sm);
    const elf_symbol *sym = img ? elf_image_symbol(img, link, 1) : NULL;
    if (sym)
        snprintf(buf, cap, "%s+%" PRIu64, sym->name, link - sym->addr);
    else
        snprintf(buf, cap, "%s+0x%" PRIx64, sm->basename, link);
}

int symbolizer_function(symbolizer *s, uint64_t pc, char *buf, size_t cap)
{
    sym_module *sm = module_at(s, pc);
    elf_image *img = sm ? module_image(s, sm) : NULL;
    const elf_symbol *sym = img ? elf_image_symbol(img, pc - sm->m->base, 1) : NULL;
    if (!sym)
        return 0;
    snprintf(buf, cap, "%s", sym->name);
    return 1;
}

/* "file:line" with the file's last component. */
static void line_text(char *buf, size_t cap, const char *file, int line)
{
    const char *slash = file ? strrchr(file, '/') : NULL;
    if (file)
        snprintf(buf, cap, "%s:%d", slash ? slash + 1 : file, line);
    else
        buf[0] = '\0';
}

#define FRAMES_MAX 16

int symbolizer_frames(symbolizer *s, uint64_t pc, symbolizer_frame *out,
                      int max)
{
    sym_module *sm = module_at(s, pc);
    elf_image *img = sm ? module_image(s, sm) : NULL;
    if (!img || max <= 0)
        return 0;
    elf_frame f[FRAMES_MAX];
    int n = elf_image_frames(img, pc - sm->m->base, f, max < FRAMES_MAX ? max : FRAMES_MAX);
    for (int i = 0; i < n; i++) {
        snprintf(out[i].function, sizeof out[i].function, "%s",
                 f[i].function ? f[i].function : "?");
        line_text(out[i].line, sizeof out[i].line, f[i].file, f[i].line);
        out[i].inlined = i + 1 < n;
    }
    /* the outermost by its symbol: qualified, and known without DWARF */
    symbolizer_frame *outer = &out[n ? n - 1 : 0];
    int named = symbolizer_function(s, pc, outer->function,
                                    sizeof outer->function);
    if (n == 0 && named) {
        outer->line[0] = '\0';
        outer->inlined = 0;
        n = 1;
    }
    return n;
}

uint64_t symbolizer_alloc_site(symbolizer *s, const memtap_record *r)
{
    return alloc_stacks_site(s->stacks, r);
}

static uint64_t alloc_site(void *s, const memtap_record *r)
{
    return symbolizer_alloc_site(s, r);
}

void symbolizer_name_sites(symbolizer *s, heap_map *m)
{
    if (s && m)
        heap_map_name_sites(m, alloc_site, s);
}

uint32_t symbolizer_stack_key(symbolizer *s, uint32_t id)
{
    return alloc_stacks_key(s->stacks, id);
}

int symbolizer_stack_frames(symbolizer *s, uint32_t id,
                            int (*each)(void *arg, uint64_t pc, const char *text),
                            void *arg)
{
    const uint64_t *f;
    size_t n;
    if (!id || !memtap_trace_stack(s->trace, id, &f, &n))
        return 0;
    for (size_t i = 0; i < n; i++) {
        symbolizer_frame fr[8];
        char text[600];
        int k = symbolizer_frames(s, f[i] - 1, fr, 8), rc;
        if (k == 0) {
            symbolizer_code(s, f[i], text, sizeof text);
            if ((rc = each(arg, f[i], text)))
                return rc;
        }
        for (int j = 0; j < k; j++) {
            snprintf(text, sizeof text, "%s%s%s%s", fr[j].function,
                     fr[j].line[0] ? " " : "", fr[j].line,
                     fr[j].inlined ? " (inlined)" : "");
            if ((rc = each(arg, f[i], text)))
                return rc;
        }
    }
    return 0;
}

int symbolizer_line(symbolizer *s, uint64_t pc, char *buf, size_t cap)
{
    sym_module *sm = module_at(s, pc);
    elf_image *img = sm ? module_image(s, sm) : NULL;
    const char *file;
    int line;
    if (!img || !elf_image_line(img, pc - sm->m->base, &file, &line))
        return 0;
    line_text(buf, cap, file, line);
    return 1;
}

int symbolizer_block_type(symbolizer *s, uint64_t site, uint64_t block_size,
                          symbolizer_type *out)
{
    sym_module *sm = site ? module_at(s, site - 1) : NULL;
    elf_image *img = sm ? module_image(s, sm) : NULL;
    /* the call's last byte: the scopes of the call, not of what follows */
    if (!img || !elf_image_block_type(img, site - 1 - sm->m->base, block_size, &out->die,
                                      out->name, sizeof out->name))
        return 0;
    out->module = (uint32_t)(sm - s->mods);
    return 1;
}

int symbolizer_member(symbolizer *s, const symbolizer_type *t, uint64_t block_size,
                      uint64_t off, char *buf, size_t cap)
{
    elf_image *img = t->module < s->nmods ? module_image(s, &s->mods[t->module]) : NULL;
    return img && elf_image_member(img, t->die, block_size, off, buf, cap);
}

/* The addresses of region r named as addr (in no module) is: r up to the
 * nearest modules' ranges. */
static void region_span(const symbolizer *s, const range *r, uint64_t addr,
                        data_name *out)
{
    size_t i = BISECT_AFTER(s->mod_ranges, s->nmod_ranges, start, addr);
    const range *before = i ? &s->mod_ranges[i - 1] : NULL;
    const range *after = i < s->nmod_ranges ? &s->mod_ranges[i] : NULL;
    out->same_lo = before && before->end > r->start ? before->end : r->start;
    out->same_hi = after && after->start < r->end ? after->start : r->end;
}

void symbolizer_data(symbolizer *s, uint64_t addr, data_name *out)
{
    memset(out, 0, sizeof *out);
    out->addr = addr;
    uint64_t lo, hi;
    out->region = symbolizer_region(s, addr, &lo, &hi);
    sym_module *sm = module_at(s, addr);
    if (!sm) {
        const range *r = find_range(s->regions, s->nregions, addr);
        out->kind = DATA_REGION;
        out->object = out->region;
        out->start = r ? r->start : 0;
        if (r) /* the region's name holds up to the modules around it */
            region_span(s, r, addr, out);
        return;
    }
    uint64_t base = sm->m->base, link = addr - base, start, end;
    elf_image *img = module_image(s, sm);
    const char *var;
    out->module = sm->basename;
    if (img && elf_image_variable_at(img, link, &var, &start, &end)) {
        out->kind = DATA_VARIABLE;
        out->object = var;
        out->start = base + start;
        /* the answer holds where the module's segment (module_at's
         * last range) holds too */
        const range *seg = s->last_range;
        if (out->start >= seg->start)
            out->end = base + end < seg->end ? base + end : seg->end;
        out->same_lo = out->start;
        out->same_hi = out->end;
        return;
    }
    const elf_symbol *sym = img ? elf_image_symbol(img, link, 0) : NULL;
    const elf_section *sec = img ? elf_image_section(img, link) : NULL;
    if (sym) {
        out->kind = DATA_SYMBOL;
        out->object = sym->name;
        out->start = base + sym->addr;
    } else if (sec) {
        out->kind = DATA_SECTION;
        out->object = sec->name;
        out->start = base + sec->addr;
        /* a stripped file's data: what holds here holds between symbols
         * (within the module's range, the region's) */
        if (elf_image_section_span(img, link, &start, &end)) {
            out->same_lo = base + start > lo ? base + start : lo;
            out->same_hi = base + end < hi ? base + end : hi;
        }
    } else {
        out->kind = DATA_MODULE;
        out->object = sm->basename;
        out->start = base;
    }
}

/* Text made in parts, truncated as snprintf truncates: a name per access
 * of `memtap show` (snprintf took over a third of its time). */
typedef struct text_out {
    char *buf;
    size_t cap, at;
} text_out;

static void put_str(text_out *t, const char *s)
{
    size_t n = strlen(s);
    if (t->at + 1 < t->cap) {
        size_t room = t->cap - 1 - t->at;
        memcpy(t->buf + t->at, s, n < room ? n : room);
    }
    t->at += n;
}

const char symbolizer_dec_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

static void put_num(text_out *t, uint64_t v, unsigned base)
{
    char digits[25];
    digits[24] = '\0';
    put_str(t, symbolizer_digits(digits + 24, v, base));
}

static void put_end(text_out *t)
{
    if (t->cap)
        t->buf[t->at < t->cap ? t->at : t->cap - 1] = '\0';
}

/* The text up to the offset into t; the offset's base, or 0. */
static unsigned data_prefix(const data_name *d, text_out *t)
{
    switch (d->kind) {
    case DATA_SECTION: /* module:section+off */
        put_str(t, d->module);
        put_str(t, ":");
        put_str(t, d->object);
        put_str(t, "+");
        return 10;
    case DATA_MODULE: /* module+0xoff */
        put_str(t, d->object);
        put_str(t, "+0x");
        return 16;
    case DATA_SYMBOL:
    case DATA_REGION: /* name+off */
        put_str(t, d->object);
        put_str(t, "+");
        return 10;
    default:
        return 0;
    }
}

unsigned symbolizer_data_prefix(const data_name *d, char *buf, size_t cap)
{
    text_out t = { buf, cap, 0 };
    unsigned base = data_prefix(d, &t);
    put_end(&t);
    return base;
}

int symbolizer_data_span(symbolizer *s, const data_name *d, char *buf,
                         size_t cap, var_span *out)
{
    sym_module *sm = d->kind == DATA_VARIABLE ? module_at(s, d->addr) : NULL;
    uint64_t base = sm ? sm->m->base : 0;
    if (!sm || elf_image_variable_span(module_image(s, sm), d->addr - base, buf,
                                       cap, out) != 0)
        return -1;
    out->from += base;
    out->lo = out->lo + base > d->same_lo ? out->lo + base : d->same_lo;
    out->hi = out->hi + base < d->same_hi ? out->hi + base : d->same_hi;
    return out->lo < out->hi ? 0 : -1;
}

void symbolizer_data_text(symbolizer *s, const data_name *d, char *buf,
                          size_t cap)
{
    sym_module *sm;
    text_out t = { buf, cap, 0 };
    unsigned base = data_prefix(d, &t);
    if (base) {
        put_num(&t, d->addr - d->start, base);
    } else if (d->kind == DATA_VARIABLE) { /* the image is open:
                                              symbolizer_data found it */
        sm = module_at(s, d->addr);
        elf_image_variable(module_image(s, sm), d->addr - sm->m->base, buf,
                           cap);
        return;
    } else {
        put_str(&t, "0x");
        put_num(&t, d->addr, 16);
    }
    put_end(&t);
}

void symbolizer_object_text(const data_name *d, char *buf, size_t cap)
{
    text_out t = { buf, cap, 0 };
    if (d->kind == DATA_SECTION) {
        put_str(&t, d->module);
        put_str(&t, ":");
        put_str(&t, d->object);
    } else if (d->object) {
        put_str(&t, d->object);
    } else {
        put_str(&t, "0x");
        put_num(&t, d->addr, 16);
    }
    put_end(&t);
}

const char *symbolizer_region(symbolizer *s, uint64_t addr, uint64_t *lo,
                              uint64_t *hi)
{
    sym_module *sm = module_at(s, addr);
    *lo = *hi = 0;
    if (sm) {
        /* module_at's answer up to the next range, which takes over */
        const range *r = s->last_range;
        *lo = r->start;
        *hi = r + 1 < s->mod_ranges + s->nmod_ranges && r[1].start < r->end
                  ? r[1].start
                  : r->end;
        return sm->region;
    }
    const range *r = find_range(s->regions, s->nregions, addr);
    return r ? s->region_names[r->index] : "[unknown]";
}

const char *symbolizer_module_path(const symbolizer *s, uint64_t id)
{
    for (size_t i = 0; i < s->nmods; i++)
        if (s->mods[i].m->id == id)
            return s->mods[i].m->path;
    return NULL;
}
