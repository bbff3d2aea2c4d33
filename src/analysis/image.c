/*
 * image.c - loads an ELF file for the static engine with libelf (sections,
 * symbols) and libdw (the entries of .eh_frame, for FDE extents), and
 * derives its list of functions.
 *
 * One file: the function list is derived from the symbol, section and FDE
 * tables as they are loaded.
 */
#define _GNU_SOURCE
#include "analysis/image.h"
#include "analysis/go_functab.h"
#include "sys/vec.h"
#include "x86/insn.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct image_priv {
    elf_file file;
    uint64_t *sec_base;    /* per section index: its (laid-out) address */
    size_t nsec_base;
    Elf_Data *eh_frame;    /* .eh_frame, when present */
    uint64_t eh_frame_addr;
} image_priv;

static int cmp_sec(const void *a, const void *b)
{
    const image_section *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Collects the allocated sections (for programs and libraries, those the
 * program headers agree with); object files get addresses assigned in
 * section order, each aligned as it asks.  Overlapping sections are not
 * kept: the first by address stays. */
static int load_sections(code_image *img, image_priv *p)
{
    size_t shnum, shstrndx;
    if (elf_getshdrnum(p->file.elf, &shnum) || elf_getshdrstrndx(p->file.elf, &shstrndx))
        return ELF_E_CORRUPT;
    img->secs = calloc(shnum ? shnum : 1, sizeof *img->secs);
    p->sec_base = calloc(shnum ? shnum : 1, sizeof *p->sec_base);
    if (!img->secs || !p->sec_base)
        return ELF_E_NOMEM;
    p->nsec_base = shnum;
    uint64_t layout = 0x1000;
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(p->file.elf, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh))
            return ELF_E_CORRUPT;
        if (!(sh.sh_flags & SHF_ALLOC) || sh.sh_size == 0)
            continue;
        if (!elf_file_section_placed(&p->file, &sh))
            continue; /* section headers are advisory: this one lies */
        image_section *s = &img->secs[img->nsecs++];
        s->addr = sh.sh_addr;
        if (img->type == ET_REL) {
            uint64_t al = sh.sh_addralign > 1 ? sh.sh_addralign : 1;
            layout = (layout + al - 1) / al * al;
            s->addr = layout;
            layout += sh.sh_size;
        }
        p->sec_base[elf_ndxscn(scn)] = s->addr;
        s->size = sh.sh_size;
        s->name = elf_strptr(p->file.elf, shstrndx, sh.sh_name);
        if (!s->name)
            s->name = "?";
        s->exec = (sh.sh_flags & SHF_EXECINSTR) != 0;
        if (sh.sh_type != SHT_NOBITS) {
            Elf_Data *d = elf_getdata(scn, NULL);
            if (!d || d->d_size != sh.sh_size || !d->d_buf)
                return ELF_E_CORRUPT;
            s->data = d->d_buf;
            if (strcmp(s->name, ".eh_frame") == 0) {
                p->eh_frame = d;
                p->eh_frame_addr = s->addr;
            }
        }
    }
    qsort(img->secs, img->nsecs, sizeof *img->secs, cmp_sec);
    size_t kept = 0;
    for (size_t i = 0; i < img->nsecs; i++)
        if (!kept || img->secs[i].addr >= img->secs[kept - 1].addr +
                                               img->secs[kept - 1].size)
            img->secs[kept++] = img->secs[i];
    img->nsecs = kept;
    int has_text = 0;
    for (size_t i = 0; i < kept; i++)
        has_text |= img->secs[i].exec && img->secs[i].data != NULL;
    return has_text ? ELF_OK : ELF_E_NO_TEXT;
}

const image_section *image_section_at(const code_image *img, uint64_t addr)
{
    size_t lo = 0, hi = img->nsecs;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const image_section *s = &img->secs[mid];
        if (addr < s->addr)
            hi = mid;
        else if (addr - s->addr >= s->size)
            lo = mid + 1;
        else
            return s;
    }
    return NULL;
}

const uint8_t *image_code(const code_image *img, uint64_t addr, size_t *avail)
{
    const image_section *s = image_section_at(img, addr);
    if (!s || !s->exec || !s->data)
        return NULL;
    *avail = s->size - (addr - s->addr);
    return s->data + (addr - s->addr);
}

int image_read(const code_image *img, uint64_t addr, void *buf, size_t n)
{
    const image_section *s = image_section_at(img, addr);
    if (!s || !s->data || addr - s->addr + n > s->size)
        return -1;
    memcpy(buf, s->data + (addr - s->addr), n);
    return 0;
}

int image_is_static_data(const code_image *img, uint64_t addr)
{
    const image_section *s = image_section_at(img, addr);
    return s && !s->exec;
}

/* ---- functions ---------------------------------------------------------- */

typedef struct func_cand {
    image_func f;
    int rank;      /* lower is a better name for the same start */
} func_cand;

static int add_cand(vec *l, uint64_t start, uint64_t size, const char *name,
                    func_source src, int rank)
{
    func_cand *c = vec_push(l);
    if (!c)
        return ELF_E_NOMEM;
    c->f.start = start;
    c->f.end = size ? start + size : 0;
    c->f.name = name;
    c->f.source = (uint8_t)src;
    c->rank = (int)src * 16 + rank;
    return ELF_OK;
}

/* Code the program copies elsewhere at run time keeps its bytes: V8's
 * embedded builtins (node), which V8 copies next to the code it
 * generates, where a patched site's rel32 jump would land anywhere.  The
 * blob is named by two symbols: its start, and a 4-byte size in data. */
#define V8_BLOB "v8_Default_embedded_blob_code_"
typedef struct blob_walk {
    uint64_t code, size_at;
    int n;
} blob_walk;

static void find_blob(blob_walk *w, const GElf_Sym *s, const char *name)
{
    if (s->st_shndx == SHN_UNDEF || strncmp(name, V8_BLOB, sizeof V8_BLOB - 1))
        return;
    if (!name[sizeof V8_BLOB - 1])
        w->code = s->st_value, w->n |= 1;
    else if (!strcmp(name + sizeof V8_BLOB - 1, "size_"))
        w->size_at = s->st_value, w->n |= 2;
}

/* The blob find_blob saw as data among the objects (and as img->copied). */
static int load_copied_code(code_image *img, const blob_walk *w, vec *objects)
{
    uint32_t size;
    if (w->n != 3 || image_read(img, w->size_at, &size, sizeof size) != 0 ||
        !size)
        return 0;
    image_range *r = vec_push(objects);
    if (!r)
        return ELF_E_NOMEM;
    *r = (image_range){ w->code, w->code + size };
    img->copied = *r;
    return 0;
}

/* What add_symbol needs. */
typedef struct symbol_walk {
    code_image *img;
    image_priv *p;
    vec *cands;
    vec *objects;            /* image_range */
    func_source source;
    blob_walk blob;          /* V8's embedded builtins, when named */
} symbol_walk;

/* A function symbol defined in an executable section is a candidate; an
 * object symbol there is data. */
static int add_symbol(void *arg, const GElf_Sym *s, const char *name)
{
    symbol_walk *w = arg;
    find_blob(&w->blob, s, name);
    int type = GELF_ST_TYPE(s->st_info);
    if ((type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_OBJECT) ||
        s->st_shndx == SHN_UNDEF || s->st_shndx >= w->p->nsec_base)
        return 0;
    uint64_t a = s->st_value;
    if (w->img->type == ET_REL)
        a += w->p->sec_base[s->st_shndx];
    const image_section *sec = image_section_at(w->img, a);
    if (!sec || !sec->exec)
        return 0;
    if (type == STT_OBJECT) {
        image_range *r = s->st_size ? vec_push(w->objects) : NULL;
        if (r)
            *r = (image_range){ a, a + s->st_size };
        return s->st_size && !r ? ELF_E_NOMEM : 0;
    }
    return add_cand(w->cands, a, s->st_size, name, w->source,
                    elf_symbol_rank(s, name));
}

static int load_symbols(code_image *img, image_priv *p, GElf_Word want,
                        vec *l, vec *objects, int *found)
{
    symbol_walk w = { img, p, l, objects,
                      want == SHT_SYMTAB ? FUNC_SYMTAB : FUNC_DYNSYM,
                      { 0, 0, 0 } };
    int rc = elf_each_symbol(p->file.elf, want, add_symbol, &w, found);
    return rc ? rc : load_copied_code(img, &w.blob, objects);
}

/* FDE pointer encoding of a CIE: the 'R' entry of its augmentation data
 * (DW_EH_PE_absptr when absent); -1 when the augmentation is not
 * understood. */
static int cie_fde_encoding(const Dwarf_CIE *cie)
{
    const char *aug = cie->augmentation;
    if (!aug || aug[0] != 'z')
        return aug && aug[0] == 0 ? DW_EH_PE_absptr : -1;
    const uint8_t *d = cie->augmentation_data;
    size_t k = 0, n = cie->augmentation_data_size;
    for (aug++; *aug && k < n; aug++) {
        if (*aug == 'R')
            return d[k];
        if (*aug == 'L')
            k++;
        else if (*aug == 'P') {
            uint8_t enc = d[k++];
            k += (enc & 0x07) == 0x02 ? 2 : (enc & 0x07) == 0x03 ? 4 : 8;
        } else if (*aug != 'S' && *aug != 'B') {
            return -1;
        }
    }
    return DW_EH_PE_absptr;
}

/* Decodes one pointer of an FDE (the common encodings: 4- or 8-byte, signed
 * or not, absolute or pc-relative); returns its size, or 0. */
static size_t read_encoded(int enc, const uint8_t *p, const uint8_t *end,
                           uint64_t here, int apply_pcrel, uint64_t *out)
{
    size_t size = (enc & 0x07) == 0x03 ? 4 : (enc & 0x0f) == 0x00 ||
                  (enc & 0x07) == 0x04 ? 8 : 0;
    if (!size || (size_t)(end - p) < size || (enc & 0x70 & ~DW_EH_PE_pcrel))
        return 0;
    uint64_t v = 0;
    if (size == 4) {
        uint32_t u;
        memcpy(&u, p, 4);
        v = (enc & 0x08) ? (uint64_t)(int64_t)(int32_t)u : u;
    } else {
        memcpy(&v, p, 8);
    }
    if (apply_pcrel && (enc & 0x70) == DW_EH_PE_pcrel)
        v += here;
    *out = v;
    return size;
}

typedef struct cie_enc {
    Dwarf_Off off;
    int enc;
    int signal_frame;      /* 'S' in the augmentation */
} cie_enc;

/* Function extents from the FDEs of .eh_frame (what stripped files still
 * have): libdw frames the entries and parses the CIEs. */
static int load_eh_frame(code_image *img, image_priv *p, vec *l)
{
    if (!p->eh_frame || img->type == ET_REL)
        return ELF_OK;
    const unsigned char *ident = (const unsigned char *)elf_getident(p->file.elf, NULL);
    if (!ident)
        return ELF_OK;
    Elf_Data *d = p->eh_frame;
    cie_enc cies[64];
    size_t ncies = 0;
    Dwarf_Off off = 0, next;
    Dwarf_CFI_Entry e;
    while (dwarf_next_cfi(ident, d, true, off, &next, &e) == 0) {
        Dwarf_Off at = off;
        off = next;
        if (dwarf_cfi_cie_p(&e)) {
            if (ncies < 64)
                cies[ncies++] = (cie_enc){at, cie_fde_encoding(&e.cie),
                                          e.cie.augmentation &&
                                          strchr(e.cie.augmentation, 'S')};
            continue;
        }
        int enc = -1, signal_frame = 0;
        for (size_t i = 0; i < ncies && enc < 0; i++)
            if (cies[i].off == e.fde.CIE_pointer) {
                enc = cies[i].enc;
                signal_frame = cies[i].signal_frame;
            }
        uint64_t start, size;
        const uint8_t *q = e.fde.start, *end = e.fde.end;
        uint64_t here = p->eh_frame_addr + (uint64_t)(q - (const uint8_t *)d->d_buf);
        size_t k = enc < 0 ? 0 : read_encoded(enc, q, end, here, 1, &start);
        if (!k || !read_encoded(enc, q + k, end, 0, 0, &size))
            continue;
        if (signal_frame && size > 1) {
            /* a signal return trampoline's FDE starts one byte before its
             * code (glibc's __restore_rt): that byte is padding */
            start++;
            size--;
        }
        const image_section *sec = image_section_at(img, start);
        if (!sec || !sec->exec || size == 0)
            continue;
        int rc = add_cand(l, start, size, NULL, FUNC_EH_FRAME, 0);
        if (rc)
            return rc;
    }
    return ELF_OK;
}

typedef struct add_go {
    const code_image *img;
    vec *cands;
} add_go;

static int add_go_func(void *arg, uint64_t start, uint64_t size)
{
    add_go *g = arg;
    const image_section *sec = image_section_at(g->img, start);
    if (!sec || !sec->exec)
        return 0;
    return add_cand(g->cands, start, size, NULL, FUNC_GO, 0);
}

/* Function extents from Go's .gopclntab (stripped Go binaries have no
 * symbols, and no FDEs for Go's own code). */
static int load_go_functab(code_image *img, vec *l)
{
    for (size_t i = 0; i < img->nsecs; i++) {
        const image_section *s = &img->secs[i];
        if (s->data && strcmp(s->name, ".gopclntab") == 0) {
            add_go g = { img, l };
            return go_functab_each(s->data, s->size, add_go_func, &g);
        }
    }
    return ELF_OK;
}

static int cmp_cand(const void *a, const void *b)
{
    const func_cand *x = a, *y = b;
    if (x->f.start != y->f.start)
        return x->f.start < y->f.start ? -1 : 1;
    return x->rank - y->rank;
}

static int cmp_func(const void *a, const void *b)
{
    const image_func *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* Whether a start of this source resynchronizes the linear sweep: not the
 * tables' (unwind entries and Go's table are checked against it). */
static int trusted_start(uint8_t source)
{
    return source != FUNC_EH_FRAME && source != FUNC_GO;
}

/* Instruction starts of the executable sections as a linear sweep finds
 * them (compilers put no data in code on x86-64), resynchronized at every
 * trusted start (symbols, the entry point, PLT entries): a bit per byte. */
typedef struct sweep {
    uint8_t *bits;
    size_t *first;     /* per section: index of its first bit */
} sweep;

static int sweep_code(const code_image *img, const func_cand *c, size_t nc,
                      sweep *sw)
{
    size_t total = 0;
    sw->first = calloc(img->nsecs ? img->nsecs : 1, sizeof *sw->first);
    for (size_t i = 0; i < img->nsecs; i++) {
        sw->first[i] = total;
        if (img->secs[i].exec && img->secs[i].data)
            total += img->secs[i].size;
    }
    sw->bits = calloc(total / 8 + 1, 1);
    if (!sw->first || !sw->bits)
        return ELF_E_NOMEM;
    x86_decoder dec;
    x86_decoder_init(&dec);
    size_t k = 0; /* next trusted start (c is sorted by start) */
    for (size_t i = 0; i < img->nsecs; i++) {
        const image_section *sec = &img->secs[i];
        if (!sec->exec || !sec->data)
            continue;
        for (uint64_t at = sec->addr; at < sec->addr + sec->size;) {
            while (k < nc && (!trusted_start(c[k].f.source) ||
                              c[k].f.start < at))
                k++;
            size_t bit = sw->first[i] + (at - sec->addr);
            size_t avail = sec->size - (at - sec->addr);
            const uint8_t *code = sec->data + (at - sec->addr);
            /* a zero byte is padding, not the start of add %al,(%rax):
             * read so, an odd run of them (libLLVM-14 pads with zeros)
             * put the next function's first byte inside an instruction,
             * and its unwind entry was dropped */
            if (*code)
                sw->bits[bit / 8] |= (uint8_t)(1u << (bit % 8));
            unsigned len = *code ? x86_decode_length(&dec, code, avail) : 1;
            uint64_t next = at + (len ? len : 1);
            if (k < nc && c[k].f.start > at && c[k].f.start < next)
                next = c[k].f.start; /* a trusted start inside: resync */
            at = next;
        }
    }
    return ELF_OK;
}

static int swept(const code_image *img, const sweep *sw, uint64_t addr)
{
    const image_section *sec = image_section_at(img, addr);
    if (!sec || !sec->exec || !sec->data)
        return 0;
    size_t bit = sw->first[sec - img->secs] + (addr - sec->addr);
    return (sw->bits[bit / 8] >> (bit % 8)) & 1;
}

/* One function per distinct start, named by its best candidate, ending at
 * the largest known extent but never past the next function or its
 * section; uncovered stretches of executable sections become FUNC_GAP.
 * Unwind entries and Go's table are not trusted blindly (hand-written code
 * has wrong CFI, files get damaged): an entry that starts where the linear
 * sweep of the code finds no instruction is dropped. */
static int merge_funcs(code_image *img, vec *cands)
{
    const func_cand *c = cands->v;
    size_t nc = cands->n;
    qsort(cands->v, nc, sizeof *c, cmp_cand);
    /* the functions, and a gap before each and at each section's end */
    size_t cap = 2 * nc + img->nsecs + 1, n = 0;
    image_func *out = calloc(cap, sizeof *out);
    if (!out)
        return ELF_E_NOMEM;
    sweep sw = { NULL, NULL };
    if (sweep_code(img, c, nc, &sw) != ELF_OK) {
        free(sw.bits);
        free(sw.first);
        free(out);
        return ELF_E_NOMEM;
    }
    for (size_t i = 0; i < nc;) {
        size_t j = i;
        image_func f = c[i].f;
        for (; j < nc && c[j].f.start == f.start; j++)
            if (c[j].f.end > f.end)
                f.end = c[j].f.end;
        const image_section *sec = image_section_at(img, f.start);
        if (!sec || (!trusted_start(c[i].f.source) &&
                     !swept(img, &sw, f.start))) {
            i = j; /* a table's entry that starts inside an instruction */
            continue;
        }
        uint64_t limit = sec->addr + sec->size;
        if (j < nc && c[j].f.start < limit)
            limit = c[j].f.start;
        if (f.end == 0 || f.end > limit)
            f.end = limit;
        out[n++] = f;
        i = j;
    }
    /* gaps */
    size_t nf = n;
    for (size_t s = 0; s < img->nsecs; s++) {
        const image_section *sec = &img->secs[s];
        if (!sec->exec || !sec->data)
            continue;
        uint64_t at = sec->addr, end = sec->addr + sec->size;
        for (size_t k = 0; k <= nf && at < end; k++) {
            uint64_t next = k < nf ? out[k].start : end;
            if (k < nf && (out[k].end <= at || out[k].start >= end))
                continue;
            if (next > at && n < cap) {
                out[n].start = at;
                out[n].end = next;
                out[n].name = NULL;
                out[n].source = FUNC_GAP;
                n++;
            }
            if (k < nf)
                at = out[k].end;
        }
    }
    free(sw.bits);
    free(sw.first);
    qsort(out, n, sizeof *out, cmp_func);
    img->funcs = out;
    img->nfuncs = n;
    return ELF_OK;
}

/* The entries of the procedure linkage tables: 16 bytes each, known code
 * that no symbol names. */
static int load_plt(code_image *img, vec *l)
{
    for (size_t i = 0; i < img->nsecs; i++) {
        const image_section *s = &img->secs[i];
        if (!s->exec || !s->data || !s->name || strncmp(s->name, ".plt", 4) != 0 ||
            (s->name[4] && strcmp(s->name + 4, ".sec") && strcmp(s->name + 4, ".got")))
            continue;
        for (uint64_t at = 0; at + 16 <= s->size; at += 16) {
            int rc = add_cand(l, s->addr + at, 16, NULL, FUNC_PLT, 0);
            if (rc)
                return rc;
        }
    }
    return ELF_OK;
}

static int range_order(const void *a, const void *b)
{
    uint64_t x = ((const image_range *)a)->start, y = ((const image_range *)b)->start;
    return (x > y) - (x < y);
}

static int load_funcs(code_image *img, image_priv *p)
{
    vec l = {0, 0, 0, sizeof(func_cand)};
    vec objects = {0, 0, 0, sizeof(image_range)};
    int has_symtab = 0, has_dynsym = 0;
    int rc = load_symbols(img, p, SHT_SYMTAB, &l, &objects, &has_symtab);
    if (!rc)
        rc = load_symbols(img, p, SHT_DYNSYM, &l, &objects, &has_dynsym);
    if (objects.n)
        qsort(objects.v, objects.n, sizeof(image_range), range_order);
    img->objects = objects.v;
    img->nobjects = objects.n;
    if (!rc)
        rc = load_eh_frame(img, p, &l);
    if (!rc)
        rc = load_go_functab(img, &l);
    if (!rc)
        rc = load_plt(img, &l);
    const image_section *es = image_section_at(img, img->entry);
    if (!rc && img->type != ET_REL && es && es->exec)
        rc = add_cand(&l, img->entry, 0, NULL, FUNC_ENTRY, 0);
    if (!rc)
        rc = merge_funcs(img, &l);
    img->stripped = !has_symtab;
    free(l.v);
    return rc;
}

/* The PT_LOAD segments and the pages PT_GNU_RELRO makes read-only (the
 * loader rounds its end down to a page). */
static int load_segments(code_image *img, image_priv *p)
{
    img->segs = calloc(p->file.nph ? p->file.nph : 1, sizeof *img->segs);
    if (!img->segs)
        return ELF_E_NOMEM;
    for (size_t i = 0; i < p->file.nph; i++) {
        const GElf_Phdr *ph = &p->file.ph[i];
        if (ph->p_type == PT_LOAD && ph->p_vaddr + ph->p_memsz >= ph->p_vaddr)
            img->segs[img->nsegs++] = (image_segment){ ph->p_vaddr, ph->p_memsz,
                                                       ph->p_flags };
        if (ph->p_type == PT_GNU_RELRO) {
            img->relro_lo = ph->p_vaddr & ~4095ull;
            img->relro_hi = (ph->p_vaddr + ph->p_memsz) & ~4095ull;
        }
    }
    return ELF_OK;
}

image_memory image_memory_at(const code_image *img, uint64_t addr)
{
    for (size_t i = 0; i < img->nsegs; i++) {
        const image_segment *s = &img->segs[i];
        if (addr < s->vaddr || addr - s->vaddr >= s->memsz)
            continue;
        if (!(s->flags & PF_W) || (addr >= img->relro_lo && addr < img->relro_hi))
            return IMAGE_MEM_READ_ONLY;
        return IMAGE_MEM_WRITABLE;
    }
    return IMAGE_MEM_NONE;
}

int image_open(const char *path, code_image **out)
{
    *out = NULL;
    code_image *img = calloc(1, sizeof *img);
    image_priv *p = calloc(1, sizeof *p);
    if (!img || !p) {
        free(img);
        free(p);
        return ELF_E_NOMEM;
    }
    p->file.fd = -1;
    img->priv = p;
    img->path = path;
    int rc = elf_file_open(path, &p->file);
    const GElf_Ehdr *eh = &p->file.eh;
    if (!rc && eh->e_type != ET_EXEC && eh->e_type != ET_DYN &&
        eh->e_type != ET_REL)
        rc = ELF_E_BAD_TYPE;
    if (!rc) {
        img->type = eh->e_type;
        img->entry = eh->e_entry;
        rc = load_sections(img, p);
    }
    if (!rc)
        rc = load_segments(img, p);
    if (!rc)
        rc = load_funcs(img, p);
    if (rc) {
        int saved = errno;
        image_close(img);
        errno = saved;
        return rc;
    }
    *out = img;
    return ELF_OK;
}

void image_close(code_image *img)
{
    if (!img)
        return;
    image_priv *p = img->priv;
    if (p) {
        elf_file_close(&p->file);
        free(p->sec_base);
        free(p);
    }
    free(img->secs);
    free(img->segs);
    free(img->funcs);
    free(img->objects);
    free(img);
}
