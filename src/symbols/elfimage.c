/*
 * elfimage.c - loads one ELF file with libelf and libdw: symbols (from
 * .symtab, or .dynsym when stripped) sorted for binary search, allocated
 * sections, the build-id, DWARF lines, and DWARF global/static variables
 * for naming data down to fields and elements.  A separate debug file in
 * /usr/lib/debug/.build-id is used when the file itself has no DWARF.
 */
#define _GNU_SOURCE
#include "elfimage.h"

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

typedef struct dwarf_var {
    uint64_t addr;
    uint64_t size;
    char *name;
    Dwarf_Off type;  /* 0 when untyped */
} dwarf_var;

struct elf_image {
    int fd, debug_fd;
    Elf *elf, *debug_elf;
    Dwarf *dwarf;
    int type, has_interp;
    char interp[256];      /* PT_INTERP's path ("" when absent or long) */
    uint8_t build_id[64];
    size_t build_id_len;
    elf_symbol *syms;
    size_t nsyms;
    elf_section *secs;
    size_t nsecs;
    char **owned;          /* demangled names */
    size_t nowned;
    dwarf_var *vars;
    size_t nvars, vars_cap;
    int vars_loaded;
};

const char *elf_image_strerror(int status)
{
    switch (status) {
    case ELF_IMAGE_OK: return "success";
    case ELF_IMAGE_ENOENT:
        return errno == EINVAL ? "not a regular file" : strerror(errno);
    case ELF_IMAGE_NOT_ELF: return "not an ELF file";
    case ELF_IMAGE_NOT_X86_64: return "not an x86-64 ELF file";
    case ELF_IMAGE_CORRUPT: return "corrupt ELF file";
    case ELF_IMAGE_NOMEM: return "out of memory";
    default: return "unknown error";
    }
}

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

/* Lower rank first among symbols at one address: global, weak, local;
 * then fewer leading underscores. */
static int sym_rank(const GElf_Sym *s, const char *name)
{
    int bind = GELF_ST_BIND(s->st_info);
    int r = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 4 : 8;
    while (*name == '_' && r % 4 < 3) {
        r++;
        name++;
    }
    return r;
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

static int load_symtab(elf_image *img, Elf *elf, Elf64_Word want)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(elf, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != want || !sh.sh_entsize)
            continue;
        Elf_Data *data = elf_getdata(scn, NULL);
        if (!data)
            return ELF_IMAGE_CORRUPT;
        size_t n = sh.sh_size / sh.sh_entsize;
        sym_tmp *tmp = calloc(n ? n : 1, sizeof *tmp);
        if (!tmp)
            return ELF_IMAGE_NOMEM;
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            GElf_Sym s;
            if (!gelf_getsym(data, (int)i, &s))
                continue;
            int type = GELF_ST_TYPE(s.st_info);
            if (s.st_shndx == SHN_UNDEF || s.st_shndx == SHN_ABS ||
                (type != STT_FUNC && type != STT_OBJECT &&
                 type != STT_GNU_IFUNC))
                continue;
            const char *name = elf_strptr(elf, sh.sh_link, s.st_name);
            if (!name || !*name)
                continue;
            char *dem = strchr(name, '@') ? strndup(name, strcspn(name, "@"))
                                          : symbols_demangle(name);
            if (dem && keep_name(img, dem) != 0) {
                free(dem);
                dem = NULL;
            }
            tmp[k].s.addr = s.st_value;
            tmp[k].s.size = s.st_size;
            tmp[k].s.name = dem ? dem : name;
            tmp[k].s.is_func = type != STT_OBJECT;
            tmp[k].rank = sym_rank(&s, name);
            k++;
        }
        qsort(tmp, k, sizeof *tmp, cmp_sym);
        img->syms = calloc(k ? k : 1, sizeof *img->syms);
        if (!img->syms) {
            free(tmp);
            return ELF_IMAGE_NOMEM;
        }
        for (size_t i = 0; i < k; i++)
            img->syms[i] = tmp[i].s;
        img->nsyms = k;
        free(tmp);
        return ELF_IMAGE_OK;
    }
    return ELF_IMAGE_OK;
}

static int cmp_section(const void *a, const void *b)
{
    const elf_section *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int load_sections(elf_image *img)
{
    size_t shstrndx;
    if (elf_getshdrstrndx(img->elf, &shstrndx) != 0)
        return ELF_IMAGE_OK; /* no section headers: symbols stay empty */
    size_t cap = 0;
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(img->elf, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh))
            return ELF_IMAGE_CORRUPT;
        if (sh.sh_type == SHT_NOTE && !img->build_id_len) {
            Elf_Data *d = elf_getdata(scn, NULL);
            GElf_Nhdr nh;
            size_t off = 0, name_off, desc_off;
            while (d && (off = gelf_getnote(d, off, &nh, &name_off,
                                            &desc_off)) > 0) {
                if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
                    memcmp((char *)d->d_buf + name_off, "GNU", 4) == 0 &&
                    nh.n_descsz <= sizeof img->build_id) {
                    memcpy(img->build_id, (char *)d->d_buf + desc_off,
                           nh.n_descsz);
                    img->build_id_len = nh.n_descsz;
                }
            }
        }
        if (!(sh.sh_flags & SHF_ALLOC) || sh.sh_size == 0)
            continue;
        const char *name = elf_strptr(img->elf, shstrndx, sh.sh_name);
        if (img->nsecs == cap) {
            cap = cap ? cap * 2 : 32;
            elf_section *s = realloc(img->secs, cap * sizeof *s);
            if (!s)
                return ELF_IMAGE_NOMEM;
            img->secs = s;
        }
        img->secs[img->nsecs].addr = sh.sh_addr;
        img->secs[img->nsecs].size = sh.sh_size;
        img->secs[img->nsecs].name = name ? name : "?";
        img->nsecs++;
    }
    if (img->nsecs)
        qsort(img->secs, img->nsecs, sizeof *img->secs, cmp_section);
    return ELF_IMAGE_OK;
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

/* Opens path for reading if it is a regular file: a path named in a trace
 * may be anything (a FIFO would block, a terminal become ours, a device
 * be read forever).  EINVAL for what is not a regular file. */
static int open_regular(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
        close(fd);
        errno = EINVAL;
        return -1;
    }
    return fd;
}

/* Opens /usr/lib/debug/.build-id/xx/yyyy.debug when it exists. */
static void open_debug_file(elf_image *img)
{
    if (img->build_id_len < 2)
        return;
    char path[256];
    int n = snprintf(path, sizeof path, "/usr/lib/debug/.build-id/%02x/",
                     img->build_id[0]);
    for (size_t i = 1; i < img->build_id_len && n < 240; i++)
        n += snprintf(path + n, sizeof path - (size_t)n, "%02x",
                      img->build_id[i]);
    snprintf(path + n, sizeof path - (size_t)n, ".debug");
    img->debug_fd = open_regular(path);
    if (img->debug_fd < 0)
        return;
    img->debug_elf = elf_begin(img->debug_fd, ELF_C_READ_MMAP, NULL);
}

static int check_header(elf_image *img)
{
    if (elf_kind(img->elf) != ELF_K_ELF)
        return ELF_IMAGE_NOT_ELF;
    GElf_Ehdr eh;
    if (!gelf_getehdr(img->elf, &eh))
        return ELF_IMAGE_CORRUPT;
    if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64)
        return ELF_IMAGE_NOT_X86_64;
    img->type = eh.e_type;
    size_t nph = 0;
    if (elf_getphdrnum(img->elf, &nph) != 0)
        return ELF_IMAGE_CORRUPT;
    for (size_t i = 0; i < nph; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(img->elf, (int)i, &ph))
            return ELF_IMAGE_CORRUPT;
        if (ph.p_type == PT_INTERP) {
            img->has_interp = 1;
            size_t size = 0;
            const char *raw = elf_rawfile(img->elf, &size);
            if (raw && ph.p_offset < size && ph.p_filesz > 0 &&
                ph.p_filesz <= sizeof img->interp &&
                ph.p_filesz <= size - ph.p_offset &&
                raw[ph.p_offset + ph.p_filesz - 1] == '\0')
                memcpy(img->interp, raw + ph.p_offset, ph.p_filesz);
        }
    }
    return ELF_IMAGE_OK;
}

int elf_image_open(const char *path, elf_image **out)
{
    *out = NULL;
    elf_version(EV_CURRENT);
    elf_image *img = calloc(1, sizeof *img);
    if (!img)
        return ELF_IMAGE_NOMEM;
    img->debug_fd = -1;
    img->fd = open_regular(path);
    int rc = ELF_IMAGE_OK;
    if (img->fd < 0)
        rc = ELF_IMAGE_ENOENT;
    else if (!(img->elf = elf_begin(img->fd, ELF_C_READ_MMAP, NULL)))
        rc = ELF_IMAGE_NOT_ELF;
    if (rc == ELF_IMAGE_OK)
        rc = check_header(img);
    if (rc == ELF_IMAGE_OK)
        rc = load_sections(img);
    if (rc == ELF_IMAGE_OK) {
        img->dwarf = dwarf_begin_elf(img->elf, DWARF_C_READ, NULL);
        if (!img->dwarf || !has_symtab(img->elf))
            open_debug_file(img);
        if (!img->dwarf && img->debug_elf)
            img->dwarf = dwarf_begin_elf(img->debug_elf, DWARF_C_READ, NULL);
        Elf *symsrc = has_symtab(img->elf) || !img->debug_elf ||
                              !has_symtab(img->debug_elf)
                          ? img->elf
                          : img->debug_elf;
        rc = load_symtab(img, symsrc, SHT_SYMTAB);
        if (rc == ELF_IMAGE_OK && img->nsyms == 0)
            rc = load_symtab(img, img->elf, SHT_DYNSYM);
    }
    if (rc != ELF_IMAGE_OK) {
        int saved = errno;
        elf_image_close(img);
        errno = saved;
        return rc;
    }
    *out = img;
    return ELF_IMAGE_OK;
}

void elf_image_close(elf_image *img)
{
    if (!img)
        return;
    for (size_t i = 0; i < img->nvars; i++)
        free(img->vars[i].name);
    free(img->vars);
    for (size_t i = 0; i < img->nowned; i++)
        free(img->owned[i]);
    free(img->owned);
    free(img->syms);
    free(img->secs);
    if (img->dwarf)
        dwarf_end(img->dwarf);
    if (img->debug_elf)
        elf_end(img->debug_elf);
    if (img->elf)
        elf_end(img->elf);
    if (img->debug_fd >= 0)
        close(img->debug_fd);
    if (img->fd >= 0)
        close(img->fd);
    free(img);
}

const uint8_t *elf_image_build_id(const elf_image *img, size_t *len)
{
    *len = img->build_id_len;
    return img->build_id_len ? img->build_id : NULL;
}

int elf_image_has_dwarf(const elf_image *img) { return img->dwarf != NULL; }
int elf_image_type(const elf_image *img) { return img->type; }
int elf_image_has_interp(const elf_image *img) { return img->has_interp; }
const char *elf_image_interp(const elf_image *img) { return img->interp; }

int elf_image_imports(const elf_image *img, const char *name)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(img->elf, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM ||
            !sh.sh_entsize)
            continue;
        Elf_Data *data = elf_getdata(scn, NULL);
        for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
            GElf_Sym s;
            const char *n;
            if (gelf_getsym(data, (int)i, &s) && s.st_shndx == SHN_UNDEF &&
                (n = elf_strptr(img->elf, sh.sh_link, s.st_name)) &&
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

const elf_symbol *elf_image_symbol_named(const elf_image *img,
                                         const char *name)
{
    for (size_t i = 0; i < img->nsyms; i++)
        if (strcmp(img->syms[i].name, name) == 0)
            return &img->syms[i];
    return NULL;
}

const elf_symbol *elf_image_symbol(const elf_image *img, uint64_t addr,
                                   int want_func)
{
    /* last symbol starting at or before addr */
    size_t lo = 0, hi = img->nsyms;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (img->syms[mid].addr <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
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
    return best;
}

const elf_section *elf_image_section(const elf_image *img, uint64_t addr)
{
    size_t lo = 0, hi = img->nsecs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (img->secs[mid].addr <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
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
    if (!img->dwarf || !dwarf_addrdie(img->dwarf, addr, &cu))
        return 0;
    Dwarf_Line *l = dwarf_getsrc_die(&cu, addr);
    if (!l || dwarf_lineno(l, line) != 0)
        return 0;
    *file = dwarf_linesrc(l, NULL, NULL);
    return *file != NULL;
}

/* ---- DWARF variables ---- */

static int var_location(Dwarf_Die *die, uint64_t *addr)
{
    Dwarf_Attribute attr;
    Dwarf_Op *ops;
    size_t nops;
    if (!dwarf_attr(die, DW_AT_location, &attr) ||
        dwarf_getlocation(&attr, &ops, &nops) != 0 || nops != 1 ||
        ops[0].atom != DW_OP_addr)
        return 0;
    *addr = ops[0].number;
    return 1;
}

static Dwarf_Off type_of(Dwarf_Die *die, Dwarf_Die *type)
{
    Dwarf_Attribute attr;
    if (!dwarf_attr_integrate(die, DW_AT_type, &attr) ||
        !dwarf_formref_die(&attr, type))
        return 0;
    return dwarf_dieoffset(type);
}

static void add_var(elf_image *img, Dwarf_Die *die)
{
    uint64_t addr;
    const char *name = dwarf_diename(die);
    if (!name || !var_location(die, &addr))
        return;
    Dwarf_Die type;
    Dwarf_Off toff = type_of(die, &type);
    Dwarf_Word size = 0;
    if (toff && dwarf_aggregate_size(&type, &size) != 0)
        size = 0;
    if (img->nvars == img->vars_cap) {
        size_t cap = img->vars_cap ? img->vars_cap * 2 : 64;
        dwarf_var *v = realloc(img->vars, cap * sizeof *v);
        if (!v)
            return;
        img->vars = v;
        img->vars_cap = cap;
    }
    char *copy = strdup(name);
    if (!copy)
        return;
    img->vars[img->nvars++] = (dwarf_var){ addr, size, copy, toff };
}

static void walk_dies(elf_image *img, Dwarf_Die *parent, int depth)
{
    Dwarf_Die child;
    if (depth > 32 || dwarf_child(parent, &child) != 0)
        return;
    do {
        int tag = dwarf_tag(&child);
        if (tag == DW_TAG_variable)
            add_var(img, &child);
        else if (tag == DW_TAG_subprogram || tag == DW_TAG_lexical_block ||
                 tag == DW_TAG_namespace)
            walk_dies(img, &child, depth + 1);
    } while (dwarf_siblingof(&child, &child) == 0);
}

static int cmp_var(const void *a, const void *b)
{
    const dwarf_var *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void load_vars(elf_image *img)
{
    img->vars_loaded = 1;
    if (!img->dwarf)
        return;
    Dwarf_Off off = 0, next;
    size_t hsize;
    while (dwarf_nextcu(img->dwarf, off, &next, &hsize, NULL, NULL, NULL) ==
           0) {
        Dwarf_Die cu;
        if (dwarf_offdie(img->dwarf, off + hsize, &cu))
            walk_dies(img, &cu, 0);
        off = next;
    }
    if (img->nvars)
        qsort(img->vars, img->nvars, sizeof *img->vars, cmp_var);
}

static Dwarf_Die *strip_qualifiers(Dwarf_Die *type)
{
    for (int guard = 0; guard < 16; guard++) {
        int tag = dwarf_tag(type);
        if (tag != DW_TAG_typedef && tag != DW_TAG_const_type &&
            tag != DW_TAG_volatile_type && tag != DW_TAG_restrict_type &&
            tag != DW_TAG_atomic_type)
            return type;
        if (!type_of(type, type))
            return NULL;
    }
    return NULL;
}

static uint64_t die_size(Dwarf_Die *die)
{
    Dwarf_Word size;
    return dwarf_aggregate_size(die, &size) == 0 ? size : 0;
}

/* Steps into the member of a struct/union holding *off. */
static int into_member(Dwarf_Die *type, uint64_t *off, char *buf, size_t cap,
                       size_t *len)
{
    Dwarf_Die m;
    if (dwarf_child(type, &m) != 0)
        return 0;
    do {
        if (dwarf_tag(&m) != DW_TAG_member)
            continue;
        Dwarf_Attribute attr;
        Dwarf_Word moff = 0;
        if (dwarf_attr(&m, DW_AT_data_member_location, &attr) &&
            dwarf_formudata(&attr, &moff) != 0)
            continue;
        Dwarf_Die mt;
        if (!type_of(&m, &mt))
            continue;
        uint64_t msize = die_size(&mt);
        if (*off < moff || *off - moff >= (msize ? msize : 1))
            continue;
        const char *name = dwarf_diename(&m);
        if (name && *len < cap)
            *len += (size_t)snprintf(buf + *len, cap - *len, ".%s", name);
        *off -= moff;
        *type = mt;
        return 1;
    } while (dwarf_siblingof(&m, &m) == 0);
    return 0;
}

/* Steps into the element of an array holding *off (every dimension). */
static int into_element(Dwarf_Die *type, uint64_t *off, char *buf, size_t cap,
                        size_t *len)
{
    Dwarf_Die elem;
    if (!type_of(type, &elem))
        return 0;
    uint64_t esize = die_size(&elem);
    if (!esize)
        return 0;
    uint64_t counts[8];
    int ndims = 0;
    Dwarf_Die sub;
    if (dwarf_child(type, &sub) == 0) {
        do {
            if (dwarf_tag(&sub) != DW_TAG_subrange_type || ndims == 8)
                continue;
            Dwarf_Attribute attr;
            Dwarf_Word v = 0;
            if (dwarf_attr(&sub, DW_AT_count, &attr) &&
                dwarf_formudata(&attr, &v) == 0)
                counts[ndims++] = v;
            else if (dwarf_attr(&sub, DW_AT_upper_bound, &attr) &&
                     dwarf_formudata(&attr, &v) == 0)
                counts[ndims++] = v + 1;
            else
                counts[ndims++] = 0; /* flexible or unknown */
        } while (dwarf_siblingof(&sub, &sub) == 0);
    }
    if (ndims == 0)
        counts[ndims++] = 0;
    for (int d = 0; d < ndims; d++) {
        uint64_t stride = esize;
        for (int k = d + 1; k < ndims; k++)
            stride *= counts[k] ? counts[k] : 1;
        uint64_t idx = *off / stride;
        if (*len < cap)
            *len += (size_t)snprintf(buf + *len, cap - *len, "[%llu]",
                                     (unsigned long long)idx);
        *off -= idx * stride;
    }
    *type = elem;
    return 1;
}

/* The DWARF variable holding addr, or NULL. */
static const dwarf_var *variable_at(elf_image *img, uint64_t addr)
{
    if (!img->vars_loaded)
        load_vars(img);
    size_t lo = 0, hi = img->nvars;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (img->vars[mid].addr <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo, steps = 0; i-- > 0 && steps < 8; steps++) {
        const dwarf_var *c = &img->vars[i];
        if (addr - c->addr < (c->size ? c->size : 1))
            return c;
    }
    return NULL;
}

int elf_image_variable_at(elf_image *img, uint64_t addr, const char **name,
                          uint64_t *start)
{
    const dwarf_var *v = variable_at(img, addr);
    if (v) {
        *name = v->name;
        *start = v->addr;
    }
    return v != NULL;
}

int elf_image_variable(elf_image *img, uint64_t addr, char *buf, size_t cap)
{
    const dwarf_var *v = variable_at(img, addr);
    if (!v)
        return 0;
    uint64_t off = addr - v->addr;
    size_t len = (size_t)snprintf(buf, cap, "%s", v->name);
    Dwarf_Die type_mem, *type = &type_mem;
    if (v->type && dwarf_offdie(img->dwarf, v->type, type)) {
        for (int depth = 0; depth < 32 && (type = strip_qualifiers(type));
             depth++) {
            int tag = dwarf_tag(type);
            int stepped = 0;
            if (tag == DW_TAG_structure_type || tag == DW_TAG_union_type ||
                tag == DW_TAG_class_type)
                stepped = into_member(type, &off, buf, cap, &len);
            else if (tag == DW_TAG_array_type)
                stepped = into_element(type, &off, buf, cap, &len);
            if (!stepped)
                break;
        }
    }
    if (off && len < cap)
        snprintf(buf + len, cap - len, "+%llu", (unsigned long long)off);
    return 1;
}
