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
    dwarf_vars *vars;      /* of dwarf, made on first use */
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
    dwarf_vars_destroy(img->vars);
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

/* The file's variables, read on first use; NULL without DWARF. */
static dwarf_vars *vars_of(elf_image *img)
{
    if (!img->vars && img->dwarf)
        img->vars = dwarf_vars_load(img->dwarf);
    return img->vars;
}

int elf_image_variable_at(elf_image *img, uint64_t addr, const char **name,
                          uint64_t *start)
{
    dwarf_vars *v = vars_of(img);
    return v && dwarf_vars_at(v, addr, name, start);
}

int elf_image_variable(elf_image *img, uint64_t addr, char *buf, size_t cap)
{
    dwarf_vars *v = vars_of(img);
    return v && dwarf_vars_name(v, addr, buf, cap);
}
