/*
 * elfimage.c - loads one ELF file with libelf and libdw: symbols (from
 * .symtab, or .dynsym when stripped) sorted for binary search, allocated
 * sections, the build-id, DWARF lines, and (through dwarf_vars.c) DWARF
 * global/static variables.  A separate debug file in
 * /usr/lib/debug/.build-id is used when the file itself has no DWARF.
 */
#define _GNU_SOURCE
#include "elfimage.h"
#include "dwarf_vars.h"
#include "sys/bisect.h"
#include "sys/vec.h"

#include <dlfcn.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct elf_image {
    elf_file file;
    elf_file debug;        /* the separate debug file, when there is one */
    Elf *debug_elf;        /* debug.elf, or NULL */
    Dwarf *dwarf;          /* dwarf_of's */
    int dwarf_tried;
    elf_symbol *syms;
    size_t nsyms;
    elf_section *secs;
    size_t nsecs;
    char **owned;          /* demangled names */
    size_t nowned;
    dwarf_vars *vars;      /* of dwarf, made on first use */
};

char *symbols_demangle(const char *name)
{
    typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);
    static demangle_fn fn;
    static int tried;
    if (strncmp(name, "_Z", 2) != 0)
        return NULL;
    if (!tried) {
        /* the C++ runtime's demangler, when the system has one */
        tried = 1;
        void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
        if (h)
            fn = (demangle_fn)dlsym(h, "__cxa_demangle");
    }
    int status = -1;
    char *out = fn ? fn(name, NULL, NULL, &status) : NULL;
    if (status != 0) {
        free(out);
        return NULL;
    }
    return out;
}

static int keep_name(elf_image *img, char *s)
{
    char **o = realloc(img->owned, (img->nowned + 1) * sizeof *o);
    if (!o)
        return -1;
    img->owned = o;
    o[img->nowned++] = s;
    return 0;
}

typedef struct sym_tmp {
    elf_symbol s;
    int rank;
} sym_tmp;

static int cmp_sym(const void *a, const void *b)
{
    const sym_tmp *x = a, *y = b;
    if (x->s.addr != y->s.addr)
        return x->s.addr < y->s.addr ? -1 : 1;
    return x->rank - y->rank;
}

/* Symbols as they are read, before sorting. */
typedef struct sym_list {
    elf_image *img;
    sym_tmp *v;
    size_t n, cap;
} sym_list;

/* Keeps a function or object symbol defined in the file, its name without
 * a version ("@..."); a C++ name is demangled later (demangled()). */
static int add_symbol(void *arg, const GElf_Sym *s, const char *name)
{
    sym_list *l = arg;
    int type = GELF_ST_TYPE(s->st_info);
    if (s->st_shndx == SHN_UNDEF || s->st_shndx == SHN_ABS ||
        (type != STT_FUNC && type != STT_OBJECT && type != STT_GNU_IFUNC))
        return 0;
    sym_tmp *t = array_push((void **)&l->v, &l->n, &l->cap, sizeof *t);
    if (!t)
        return ELF_E_NOMEM;
    int versioned = strchr(name, '@') != NULL;
    char *bare = versioned ? strndup(name, strcspn(name, "@")) : NULL;
    if (bare && keep_name(l->img, bare) != 0) {
        free(bare);
        bare = NULL;
    }
    t->s.addr = s->st_value;
    t->s.size = s->st_size;
    t->s.name = bare ? bare : name;
    t->s.is_func = type != STT_OBJECT;
    /* demangled when a lookup first returns it: most never are (node's
     * run spent half a second demangling its whole table) */
    t->s.mangled = !versioned && strncmp(name, "_Z", 2) == 0;
    t->rank = elf_symbol_rank(s, name);
    return 0;
}

/* The symbols of elf's table of type `want`, sorted by address and rank;
 * none when it has no such table. */
static int load_symtab(elf_image *img, Elf *elf, GElf_Word want)
{
    sym_list l = { img, NULL, 0, 0 };
    int found;
    int rc = elf_each_symbol(elf, want, add_symbol, &l, &found);
    if (rc == ELF_OK && l.n) {
        qsort(l.v, l.n, sizeof *l.v, cmp_sym);
        img->syms = calloc(l.n, sizeof *img->syms);
        for (size_t i = 0; img->syms && i < l.n; i++)
            img->syms[i] = l.v[i].s;
        img->nsyms = img->syms ? l.n : 0;
        rc = img->syms ? ELF_OK : ELF_E_NOMEM;
    }
    free(l.v);
    return rc;
}

static int cmp_section(const void *a, const void *b)
{
    const elf_section *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int load_sections(elf_image *img)
{
    Elf *elf = img->file.elf;
    size_t shstrndx, cap = 0;
    if (elf_getshdrstrndx(elf, &shstrndx) != 0)
        return ELF_OK; /* no section headers: symbols stay empty */
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(elf, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh))
            return ELF_E_CORRUPT;
        if (!(sh.sh_flags & SHF_ALLOC) || sh.sh_size == 0 ||
            !elf_file_section_placed(&img->file, &sh))
            continue;
        const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
        elf_section *sec = array_push((void **)&img->secs, &img->nsecs, &cap,
                                      sizeof *sec);
        if (!sec)
            return ELF_E_NOMEM;
        *sec = (elf_section){ sh.sh_addr, sh.sh_size, name ? name : "?" };
    }
    if (img->nsecs)
        qsort(img->secs, img->nsecs, sizeof *img->secs, cmp_section);
    return ELF_OK;
}

static int has_symtab(Elf *elf)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(elf, scn))) {
        GElf_Shdr sh;
        if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
            return 1;
    }
    return 0;
}

/* Whether elf has DWARF's .debug_info, without reading it. */
static int has_debug_info(Elf *elf)
{
    size_t strndx;
    if (elf_getshdrstrndx(elf, &strndx) != 0)
        return 0;
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(elf, scn))) {
        GElf_Shdr sh;
        const char *name = gelf_getshdr(scn, &sh)
                               ? elf_strptr(elf, strndx, sh.sh_name)
                               : NULL;
        if (name && sh.sh_type != SHT_NOBITS &&
            (!strcmp(name, ".debug_info") || !strcmp(name, ".zdebug_info")))
            return 1;
    }
    return 0;
}

/* The DWARF of the file or of its debug file, opened on first use (libdw
 * decompresses the sections as it opens them: libc's debug file takes
 * tens of milliseconds, which the lines of `show --raw` do not need). */
static Dwarf *dwarf_of(elf_image *img)
{
    if (!img->dwarf_tried) {
        img->dwarf_tried = 1;
        img->dwarf = dwarf_begin_elf(img->file.elf, DWARF_C_READ, NULL);
        if (!img->dwarf && img->debug_elf)
            img->dwarf = dwarf_begin_elf(img->debug_elf, DWARF_C_READ, NULL);
    }
    return img->dwarf;
}

/* Opens /usr/lib/debug/.build-id/xx/yyyy.debug when it exists. */
static void open_debug_file(elf_image *img)
{
    if (img->file.build_id_len < 2)
        return;
    char path[256];
    int n = snprintf(path, sizeof path, "/usr/lib/debug/.build-id/%02x/",
                     img->file.build_id[0]);
    for (size_t i = 1; i < img->file.build_id_len && n < 240; i++)
        n += snprintf(path + n, sizeof path - (size_t)n, "%02x",
                      img->file.build_id[i]);
    snprintf(path + n, sizeof path - (size_t)n, ".debug");
    if (elf_file_open(path, &img->debug) == ELF_OK)
        img->debug_elf = img->debug.elf;
}

int elf_image_open(const char *path, elf_image **out)
{
    *out = NULL;
    elf_image *img = calloc(1, sizeof *img);
    if (!img)
        return ELF_E_NOMEM;
    img->debug.fd = -1;
    int rc = elf_file_open(path, &img->file);
    Elf *elf = img->file.elf;
    if (rc == ELF_OK)
        rc = load_sections(img);
    if (rc == ELF_OK) {
        if (!has_debug_info(elf) || !has_symtab(elf))
            open_debug_file(img);
        Elf *symsrc = has_symtab(elf) || !img->debug_elf ||
                              !has_symtab(img->debug_elf)
                          ? elf
                          : img->debug_elf;
        rc = load_symtab(img, symsrc, SHT_SYMTAB);
        if (rc == ELF_OK && img->nsyms == 0)
            rc = load_symtab(img, elf, SHT_DYNSYM);
    }
    if (rc != ELF_OK) {
        int saved = errno;
        elf_image_close(img);
        errno = saved;
        return rc;
    }
    *out = img;
    return ELF_OK;
}

void elf_image_close(elf_image *img)
{
    if (!img)
        return;
    dwarf_vars_destroy(img->vars);
    for (size_t i = 0; i < img->nowned; i++)
        free(img->owned[i]);
    free(img->owned);
    free(img->syms);
    free(img->secs);
    if (img->dwarf)
        dwarf_end(img->dwarf);
    elf_file_close(&img->debug);
    elf_file_close(&img->file);
    free(img);
}

const uint8_t *elf_image_build_id(const elf_image *img, size_t *len)
{
    *len = img->file.build_id_len;
    return img->file.build_id_len ? img->file.build_id : NULL;
}

int elf_image_type(const elf_image *img) { return img->file.eh.e_type; }
int elf_image_has_interp(const elf_image *img)
{
    return img->file.has_interp;
}

int elf_image_is_library(const elf_image *img)
{
    return img->file.eh.e_type == ET_DYN && !img->file.has_interp && !img->file.pie;
}
const char *elf_image_interp(const elf_image *img)
{
    return img->file.interp;
}

int elf_image_imports(const elf_image *img, const char *name)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(img->file.elf, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM ||
            !sh.sh_entsize)
            continue;
        Elf_Data *data = elf_getdata(scn, NULL);
        for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
            GElf_Sym s;
            const char *n;
            if (gelf_getsym(data, (int)i, &s) && s.st_shndx == SHN_UNDEF &&
                (n = elf_strptr(img->file.elf, sh.sh_link, s.st_name)) &&
                strcmp(n, name) == 0)
                return 1;
        }
    }
    return 0;
}

static int contains(const elf_symbol *s, uint64_t addr)
{
    return addr == s->addr || (addr > s->addr && addr - s->addr < s->size);
}

/* s, its name demangled now if it is a C++ one not yet (the image's
 * symbols are its own: a lookup may finish one). */
static const elf_symbol *demangled(const elf_image *img, const elf_symbol *s)
{
    if (!s || !s->mangled)
        return s;
    elf_symbol *w = (elf_symbol *)s;
    char *dem = symbols_demangle(s->name);
    if (dem && keep_name((elf_image *)img, dem) == 0)
        w->name = dem;
    else
        free(dem);
    w->mangled = 0;
    return s;
}

const elf_symbol *elf_image_symbol_named(const elf_image *img,
                                         const char *name)
{
    for (size_t i = 0; i < img->nsyms; i++)
        if (strcmp(demangled(img, &img->syms[i])->name, name) == 0)
            return &img->syms[i];
    return NULL;
}

const elf_symbol *elf_image_symbol(const elf_image *img, uint64_t addr,
                                   int want_func)
{
    /* last symbol starting at or before addr */
    size_t lo = BISECT_AFTER(img->syms, img->nsyms, addr, addr);
    /* walk back over a few neighbours: nested or aliased symbols */
    const elf_symbol *best = NULL;
    for (size_t i = lo, steps = 0; i-- > 0 && steps < 64; steps++) {
        const elf_symbol *s = &img->syms[i];
        if ((!want_func || s->is_func) && contains(s, addr)) {
            if (!best || s->addr != best->addr ||
                (best->size == 0 && s->size))
                best = s;
            else if (s->addr == best->addr)
                best = s; /* earlier entry at the same address ranks higher */
        }
        if (best && s->addr < best->addr)
            break;
    }
    return demangled(img, best);
}

const elf_section *elf_image_section(const elf_image *img, uint64_t addr)
{
    size_t lo = BISECT_AFTER(img->secs, img->nsecs, addr, addr);
    /* .tbss overlaps the sections after it: look one further back */
    for (size_t i = lo, steps = 0; i-- > 0 && steps < 2; steps++)
        if (addr - img->secs[i].addr < img->secs[i].size)
            return &img->secs[i];
    return NULL;
}

int elf_image_line(elf_image *img, uint64_t addr, const char **file,
                   int *line)
{
    Dwarf_Die cu;
    Dwarf *dwarf = dwarf_of(img);
    if (!dwarf || !dwarf_addrdie(dwarf, addr, &cu))
        return 0;
    Dwarf_Line *l = dwarf_getsrc_die(&cu, addr);
    if (!l || dwarf_lineno(l, line) != 0)
        return 0;
    *file = dwarf_linesrc(l, NULL, NULL);
    return *file != NULL;
}

/* File number `index` of cu's line table, or NULL. */
static const char *cu_file(Dwarf_Die *cu, Dwarf_Word index)
{
    Dwarf_Files *files;
    size_t n;
    if (dwarf_getsrcfiles(cu, &files, &n) != 0 || index >= n)
        return NULL;
    return dwarf_filesrc(files, index, NULL, NULL);
}

int elf_image_frames(elf_image *img, uint64_t addr, elf_frame *out, int max)
{
    Dwarf_Die cu, *scopes;
    Dwarf *dwarf = dwarf_of(img);
    if (!dwarf || !dwarf_addrdie(dwarf, addr, &cu))
        return 0;
    elf_frame at = { NULL, NULL, 0 };
    Dwarf_Line *l = dwarf_getsrc_die(&cu, addr);
    if (l && dwarf_lineno(l, &at.line) == 0)
        at.file = dwarf_linesrc(l, NULL, NULL);
    int nscopes = dwarf_getscopes(&cu, addr, &scopes), k = 0, outer = 0;
    for (int i = 0; i < nscopes && k < max && !outer; i++) {
        int tag = dwarf_tag(&scopes[i]);
        if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
            continue;
        at.function = dwarf_diename(&scopes[i]);
        out[k++] = at;
        if ((outer = tag == DW_TAG_subprogram))
            break;
        /* where this one was inlined: the next frame's place */
        Dwarf_Attribute a;
        Dwarf_Word file = 0, line = 0;
        dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &a), &file);
        dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &a), &line);
        at.file = cu_file(&cu, file);
        at.line = (int)line;
    }
    /* libdw gives the scopes of an inlined instance without the function
     * holding it: that one is at the last call's place, unnamed here */
    if (!outer && k > 0 && k < max) {
        at.function = NULL;
        out[k++] = at;
    }
    if (nscopes > 0)
        free(scopes);
    return k;
}

/* The file's variables, read on first use; NULL without DWARF. */
static dwarf_vars *vars_of(elf_image *img)
{
    if (!img->vars && dwarf_of(img))
        img->vars = dwarf_vars_load(img->dwarf);
    return img->vars;
}

int elf_image_variable_at(elf_image *img, uint64_t addr, const char **name,
                          uint64_t *start, uint64_t *end)
{
    dwarf_vars *v = vars_of(img);
    return v && dwarf_vars_at(v, addr, name, start, end);
}

int elf_image_variable(elf_image *img, uint64_t addr, char *buf, size_t cap)
{
    dwarf_vars *v = vars_of(img);
    return v && dwarf_vars_name(v, addr, buf, cap);
}

int elf_image_variable_span(elf_image *img, uint64_t addr, char *buf,
                            size_t cap, var_span *out)
{
    dwarf_vars *v = vars_of(img);
    return v ? dwarf_vars_span(v, addr, buf, cap, out) : -1;
}

int elf_image_block_type(elf_image *img, uint64_t pc, uint64_t block_size,
                         uint64_t *type, char *name, size_t cap)
{
    dwarf_vars *v = vars_of(img);
    return v && dwarf_vars_block_type(v, pc, block_size, type, name, cap);
}

int elf_image_member(elf_image *img, uint64_t type, uint64_t block_size,
                     uint64_t off, char *buf, size_t cap)
{
    dwarf_vars *v = vars_of(img);
    return v && dwarf_vars_member(v, type, block_size, off, buf, cap);
}

int elf_image_section_span(elf_image *img, uint64_t addr, uint64_t *lo,
                           uint64_t *hi)
{
    if (vars_of(img)) /* variables may start anywhere: not known */
        return 0;
    size_t ns = BISECT_AFTER(img->secs, img->nsecs, addr, addr);
    if (!ns || addr - img->secs[ns - 1].addr >= img->secs[ns - 1].size)
        return 0; /* no section, or .tbss's shadow: not this simple */
    const elf_section *sec = &img->secs[ns - 1];
    *lo = sec->addr;
    *hi = sec->addr + sec->size;
    if (ns < img->nsecs && img->secs[ns].addr < *hi)
        *hi = img->secs[ns].addr;
    /* symbol_at looks back over the same 64 symbols from anywhere between
     * the last symbol that starts at or before addr and the next: past
     * their ends, none of them holds an address */
    size_t n = BISECT_AFTER(img->syms, img->nsyms, addr, addr);
    if (n < img->nsyms && img->syms[n].addr < *hi)
        *hi = img->syms[n].addr;
    for (size_t i = n, steps = 0; i-- > 0 && steps < 64; steps++) {
        const elf_symbol *s = &img->syms[i];
        uint64_t end = s->addr + (s->size ? s->size : 1);
        if (end > *lo)
            *lo = end;
    }
    return *lo <= addr && addr < *hi;
}
