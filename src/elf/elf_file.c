/*
 * elf/elf_file.c - opening and checking an x86-64 ELF file with libelf,
 * its program headers, interpreter and build-id, the placement check of
 * section headers, and the walk over a symbol table (elf_file.h).
 */
#define _GNU_SOURCE
#include "elf/elf_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *elf_strerror(int status)
{
    switch (status) {
    case ELF_OK: return "success";
    case ELF_E_OPEN:
        return errno == EINVAL ? "not a regular file" : strerror(errno);
    case ELF_E_NOT_ELF: return "not an ELF file";
    case ELF_E_NOT_X86_64: return "not an x86-64 ELF file";
    case ELF_E_CORRUPT: return "corrupt or truncated ELF file";
    case ELF_E_NOMEM: return "out of memory";
    case ELF_E_BAD_TYPE: return "not a program, library or object file";
    case ELF_E_NO_TEXT: return "no executable code (no executable section)";
    default: return "unknown error";
    }
}

/* Opens path for reading if it is a regular file; EINVAL otherwise. */
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

/* PT_INTERP's path, when it is a terminated string that fits. */
static void read_interp(elf_file *f, const GElf_Phdr *ph)
{
    size_t size = 0;
    const char *raw = elf_rawfile(f->elf, &size);
    f->has_interp = 1;
    if (raw && ph->p_offset < size && ph->p_filesz > 0 &&
        ph->p_filesz <= sizeof f->interp && ph->p_filesz <= size - ph->p_offset &&
        raw[ph->p_offset + ph->p_filesz - 1] == '\0')
        memcpy(f->interp, raw + ph->p_offset, ph->p_filesz);
}

/* The GNU build-id of the first SHT_NOTE section that has one. */
static void read_build_id(elf_file *f)
{
    Elf_Scn *scn = NULL;
    while (!f->build_id_len && (scn = elf_nextscn(f->elf, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
            continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        GElf_Nhdr nh;
        size_t off = 0, name_off, desc_off;
        while (d && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0)
            if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
                memcmp((char *)d->d_buf + name_off, "GNU", 4) == 0 &&
                nh.n_descsz <= sizeof f->build_id) {
                memcpy(f->build_id, (char *)d->d_buf + desc_off, nh.n_descsz);
                f->build_id_len = nh.n_descsz;
            }
    }
}

/* The checks and tables of an opened f->elf. */
/* Whether PT_DYNAMIC's DT_FLAGS_1 has DF_1_PIE. */
static void read_pie(elf_file *f, const GElf_Phdr *ph)
{
    Elf_Data *d = elf_getdata_rawchunk(f->elf, (int64_t)ph->p_offset, ph->p_filesz,
                                       ELF_T_DYN);
    GElf_Dyn dyn;
    for (int i = 0; d && gelf_getdyn(d, i, &dyn) && dyn.d_tag != DT_NULL; i++)
        if (dyn.d_tag == DT_FLAGS_1 && (dyn.d_un.d_val & DF_1_PIE))
            f->pie = 1;
}

static int read_headers(elf_file *f)
{
    if (!f->elf || elf_kind(f->elf) != ELF_K_ELF ||
        !gelf_getehdr(f->elf, &f->eh))
        return ELF_E_NOT_ELF;
    if (gelf_getclass(f->elf) != ELFCLASS64 || f->eh.e_machine != EM_X86_64)
        return ELF_E_NOT_X86_64;
    if (elf_getphdrnum(f->elf, &f->nph) != 0)
        return ELF_E_CORRUPT;
    f->ph = calloc(f->nph ? f->nph : 1, sizeof *f->ph);
    if (!f->ph)
        return ELF_E_NOMEM;
    for (size_t i = 0; i < f->nph; i++) {
        if (!gelf_getphdr(f->elf, (int)i, &f->ph[i]))
            return ELF_E_CORRUPT;
        if (f->ph[i].p_type == PT_INTERP)
            read_interp(f, &f->ph[i]);
        else if (f->ph[i].p_type == PT_DYNAMIC)
            read_pie(f, &f->ph[i]);
    }
    read_build_id(f);
    return ELF_OK;
}

/* f's resources and an error, or ELF_OK. */
static int finish_open(elf_file *f, int rc)
{
    if (rc != ELF_OK) {
        int saved = errno;
        elf_file_close(f);
        errno = saved;
    }
    return rc;
}

int elf_file_open(const char *path, elf_file *f)
{
    memset(f, 0, sizeof *f);
    elf_version(EV_CURRENT);
    f->fd = open_regular(path);
    if (f->fd < 0)
        return finish_open(f, ELF_E_OPEN);
    f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
    return finish_open(f, read_headers(f));
}

int elf_file_open_memory(void *bytes, size_t size, elf_file *f)
{
    memset(f, 0, sizeof *f);
    f->fd = -1;
    elf_version(EV_CURRENT);
    f->elf = elf_memory(bytes, size);
    return finish_open(f, read_headers(f));
}

void elf_file_close(elf_file *f)
{
    if (f->elf)
        elf_end(f->elf);
    if (f->fd >= 0)
        close(f->fd);
    free(f->ph);
    memset(f, 0, sizeof *f);
    f->fd = -1;
}

int elf_file_section_placed(const elf_file *f, const GElf_Shdr *sh)
{
    if (f->eh.e_type == ET_REL)
        return 1;
    if (sh->sh_addr + sh->sh_size < sh->sh_addr)
        return 0;
    for (size_t i = 0; i < f->nph; i++) {
        const GElf_Phdr *ph = &f->ph[i];
        if (ph->p_type != PT_LOAD || sh->sh_addr < ph->p_vaddr ||
            sh->sh_addr + sh->sh_size > ph->p_vaddr + ph->p_memsz)
            continue;
        if (sh->sh_type == SHT_NOBITS)
            return 1;
        return sh->sh_offset - ph->p_offset == sh->sh_addr - ph->p_vaddr &&
               sh->sh_offset + sh->sh_size <= ph->p_offset + ph->p_filesz;
    }
    return 0;
}

int elf_symbol_rank(const GElf_Sym *s, const char *name)
{
    int bind = GELF_ST_BIND(s->st_info);
    int r = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 4 : 8;
    for (; *name == '_' && r % 4 < 3; name++)
        r++;
    return r;
}

int elf_each_symbol(Elf *elf, GElf_Word table, elf_symbol_fn fn, void *arg,
                    int *found)
{
    *found = 0;
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(elf, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != table || !sh.sh_entsize)
            continue;
        Elf_Data *data = elf_getdata(scn, NULL);
        if (!data)
            return ELF_E_CORRUPT;
        *found = 1;
        size_t n = sh.sh_size / sh.sh_entsize;
        for (size_t i = 0; i < n; i++) {
            GElf_Sym s;
            const char *name;
            if (!gelf_getsym(data, (int)i, &s) ||
                !(name = elf_strptr(elf, sh.sh_link, s.st_name)) || !*name)
                continue;
            int rc = fn(arg, &s, name);
            if (rc)
                return rc;
        }
    }
    return ELF_OK;
}
