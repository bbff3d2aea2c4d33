/*
 * rewrite/elf_input.c - the rewriter's input and output files: the input
 * mapped copy-on-write with a bit per patched page, its program headers
 * checked for what can be rewritten, its identity (FNV-1a of the bytes),
 * the rewrite header of a file memtap made, and the copy written out
 * (unpatched pages copied file to file, a program header table of its own
 * with memtap's PT_LOADs added, the segment and the stubs' pages at the
 * end; renamed into place only when whole).
 */
#define _GNU_SOURCE
#include "rewrite/elf_input.h"
#include "sys/hash.h"
#include "sys/page.h"

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int rewrite_fail(char *err, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
    return -1;
}

/* Maps the input privately: patches change memtap's copy of a page only,
 * and pages nothing reads (most of a large file) are never loaded. */
int elf_input_map(const char *path, elf_input *in, char *err, size_t cap)
{
    in->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    struct stat st;
    if (in->fd < 0 || fstat(in->fd, &st) != 0)
        return rewrite_fail(err, cap, "%s", strerror(errno));
    if (!S_ISREG(st.st_mode) || st.st_size == 0)
        return rewrite_fail(err, cap, "not a regular, non-empty file");
    in->size = (size_t)st.st_size;
    void *m = mmap(NULL, in->size, PROT_READ | PROT_WRITE, MAP_PRIVATE,
                   in->fd, 0);
    in->dirty = calloc(in->size / PAGE / 8 + 1, 1);
    if (m == MAP_FAILED || !in->dirty) {
        if (m != MAP_FAILED)
            munmap(m, in->size);
        return rewrite_fail(err, cap, "cannot map the file: %s", strerror(errno));
    }
    in->bytes = m;
    return 0;
}

void elf_input_unmap(elf_input *in)
{
    if (in->bytes)
        munmap(in->bytes, in->size);
    if (in->fd >= 0)
        close(in->fd);
    free(in->dirty);
    free(in->ph);
}

/* Bytes [off, off+len) of the copy are about to change. */
uint8_t *elf_input_patch(elf_input *in, size_t off, size_t len)
{
    for (size_t p = off / PAGE; p <= (off + len - 1) / PAGE; p++)
        in->dirty[p / 8] |= (uint8_t)(1u << (p % 8));
    return in->bytes + off;
}

static int is_dirty(const elf_input *in, size_t page)
{
    return (in->dirty[page / 8] >> (page % 8)) & 1;
}

/* FNV-1a of the file, read from the descriptor (not through the map). */
int elf_input_id(const elf_input *in, uint64_t *id)
{
    static uint8_t buf[1 << 16];
    uint64_t h = FNV64_OFFSET;
    for (size_t at = 0; at < in->size;) {
        ssize_t n = pread(in->fd, buf, sizeof buf, (off_t)at);
        if (n <= 0)
            return -1;
        h = fnv1a64(h, buf, (size_t)n);
        at += (size_t)n;
    }
    *id = h;
    return 0;
}

/* Reads the program headers, and with `rewriting` checks what can be
 * rewritten: a dynamically linked x86-64 executable or shared library with
 * a PT_NOTE header to spare. */
int elf_input_check(elf_input *in, int rewriting, char *err, size_t cap)
{
    elf_file f;
    int rc = elf_file_open_memory(in->bytes, in->size, &f);
    if (rc != ELF_OK)
        return rewrite_fail(err, cap, "%s", elf_strerror(rc));
    in->eh = f.eh;
    in->nph = f.nph;
    in->ph = f.ph; /* taken over */
    f.ph = NULL;
    elf_file_close(&f);
    if (in->eh.e_type != ET_EXEC && in->eh.e_type != ET_DYN)
        return rewrite_fail(err, cap, "not an executable or shared library");
    if (in->nph == 0)
        return rewrite_fail(err, cap, "no program headers");
    int dynamic = 0, loads = 0;
    for (size_t i = 0; i < in->nph; i++) {
        const GElf_Phdr *p = &in->ph[i];
        if (p->p_type == PT_LOAD) {
            loads++;
            if (p->p_offset + p->p_filesz > in->size ||
                p->p_vaddr + p->p_memsz < p->p_vaddr)
                return rewrite_fail(err, cap,
                                    "segment %zu lies outside the file", i);
            if (p->p_vaddr + p->p_memsz > in->load_end)
                in->load_end = p->p_vaddr + p->p_memsz;
        }
        dynamic |= p->p_type == PT_DYNAMIC;
    }
    if (!rewriting)
        return 0;
    if (!loads)
        return rewrite_fail(err, cap, "no loadable segment");
    if (!dynamic)
        return rewrite_fail(err, cap, "static executable: the runtime is "
                                      "loaded with LD_PRELOAD, which a "
                                      "statically linked program never does "
                                      "(link it dynamically)");
    return 0;
}

/* File offset of the bytes at vaddr, or -1. */
int64_t elf_input_offset(const elf_input *in, uint64_t vaddr, uint64_t len)
{
    for (size_t i = 0; i < in->nph; i++) {
        const GElf_Phdr *p = &in->ph[i];
        if (p->p_type == PT_LOAD && vaddr >= p->p_vaddr &&
            vaddr + len <= p->p_vaddr + p->p_filesz)
            return (int64_t)(vaddr - p->p_vaddr + p->p_offset);
    }
    return -1;
}

int64_t elf_input_dt_init(const elf_input *in, uint64_t *init)
{
    for (size_t i = 0; i < in->nph; i++) {
        const GElf_Phdr *p = &in->ph[i];
        if (p->p_type != PT_DYNAMIC || p->p_offset > in->size ||
            p->p_filesz > in->size - p->p_offset)
            continue;
        for (size_t at = p->p_offset; at + sizeof(Elf64_Dyn) <= p->p_offset + p->p_filesz;
             at += sizeof(Elf64_Dyn)) {
            Elf64_Dyn d;
            memcpy(&d, in->bytes + at, sizeof d);
            if (d.d_tag == DT_NULL)
                break;
            if (d.d_tag == DT_INIT) {
                *init = d.d_un.d_ptr;
                return (int64_t)(at + offsetof(Elf64_Dyn, d_un));
            }
        }
    }
    return -1;
}

/* Copies [at, at+len) of the input file to out's current position. */
/* Writes all n bytes: 0, or -1 with errno (ENOSPC for a short write,
 * which sets none). */
static int write_all(int fd, const void *p, size_t n)
{
    ssize_t w = write(fd, p, n);
    if (w == (ssize_t)n)
        return 0;
    if (w >= 0)
        errno = ENOSPC;
    return -1;
}

static int copy_span(const elf_input *in, int out, size_t at, size_t len)
{
    static uint8_t buf[1 << 16];
    while (len > 0) {
        off_t from = (off_t)at;
        ssize_t n = copy_file_range(in->fd, &from, out, NULL, len, 0);
        if (n < 0 && errno != EXDEV && errno != ENOSYS && errno != EINVAL &&
            errno != EOPNOTSUPP)
            return -1; /* the disk is full, say: the real reason */
        if (n <= 0) { /* not between these file systems: read and write */
            n = pread(in->fd, buf, len < sizeof buf ? len : sizeof buf,
                      (off_t)at);
            if (n <= 0 || write_all(out, buf, (size_t)n) != 0)
                return -1;
        }
        at += (size_t)n;
        len -= (size_t)n;
    }
    return 0;
}

/* The input with its patched pages, then zeros up to b_at, then b. */
static int write_copy(int fd, const elf_input *in, const uint8_t *b, size_t blen,
                      size_t b_at)
{
    static const uint8_t zeros[PAGE];
    size_t npages = (in->size + PAGE - 1) / PAGE;
    for (size_t p = 0; p < npages;) {
        size_t q = p;
        int dirty = is_dirty(in, p);
        while (q < npages && is_dirty(in, q) == dirty)
            q++;
        size_t at = p * PAGE, end = q * PAGE < in->size ? q * PAGE : in->size;
        if (dirty ? write_all(fd, in->bytes + at, end - at) != 0
                  : copy_span(in, fd, at, end - at) != 0)
            return -1;
        p = q;
    }
    for (size_t at = in->size; at < b_at;) {
        size_t n = b_at - at < PAGE ? b_at - at : PAGE;
        if (write_all(fd, zeros, n) != 0)
            return -1;
        at += n;
    }
    return write_all(fd, b, blen);
}

int elf_input_write(const char *path, const char *in_path,
                    const elf_input *in, const uint8_t *b, size_t blen,
                    size_t b_at, const uint8_t *tail, size_t tail_len,
                    size_t tail_at, char *err, size_t cap)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp-XXXXXX", path) >= (int)sizeof tmp)
        return rewrite_fail(err, cap, "output path too long");
    int fd = mkstemp(tmp);
    if (fd < 0)
        return rewrite_fail(err, cap, "%s: %s", path, strerror(errno));
    struct stat st;
    int ok = stat(in_path, &st) == 0 && fchmod(fd, st.st_mode & 07777) == 0;
    ok = ok && write_copy(fd, in, b, blen, b_at) == 0;
    ok = ok && (!tail_len || (lseek(fd, (off_t)tail_at, SEEK_SET) >= 0 &&
                              write_all(fd, tail, tail_len) == 0));
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        rewrite_fail(err, cap, "%s: %s", path, strerror(e));
        errno = e; /* for the cache: a full disk is no reason to refuse */
        return -1;
    }
    return 0;
}

static void put_phdr(uint8_t *out, size_t i, const GElf_Phdr *p)
{
    Elf64_Phdr e = {
        (Elf64_Word)p->p_type, (Elf64_Word)p->p_flags, p->p_offset, p->p_vaddr,
        p->p_paddr, p->p_filesz, p->p_memsz, p->p_align,
    };
    memcpy(out + i * sizeof e, &e, sizeof e);
}

size_t elf_input_phdrs_size(const elf_input *in, size_t nadded)
{
    return (in->nph + nadded) * sizeof(Elf64_Phdr);
}

int elf_input_phdrs(elf_input *in, const added_load *added, size_t n,
                    uint64_t at, uint64_t vaddr, uint8_t *out)
{
    size_t last_load = 0, size = elf_input_phdrs_size(in, n);
    if (in->eh.e_phentsize != sizeof(Elf64_Phdr) || in->nph + n >= PN_XNUM)
        return -1;
    for (size_t i = 0; i < in->nph; i++)
        if (in->ph[i].p_type == PT_LOAD)
            last_load = i;
    for (size_t i = 0, k = 0; i < in->nph; i++) {
        GElf_Phdr p = in->ph[i];
        if (p.p_type == PT_PHDR) {
            p.p_offset = at;
            p.p_vaddr = p.p_paddr = vaddr;
            p.p_filesz = p.p_memsz = size;
        }
        put_phdr(out, k++, &p);
        for (size_t j = 0; i == last_load && j < n; j++) {
            GElf_Phdr l;
            memset(&l, 0, sizeof l);
            l.p_type = PT_LOAD;
            l.p_flags = PF_R | PF_X;
            l.p_offset = added[j].off;
            l.p_vaddr = l.p_paddr = added[j].vaddr;
            l.p_filesz = l.p_memsz = added[j].size;
            l.p_align = PAGE;
            put_phdr(out, k++, &l);
        }
    }
    uint64_t phoff = at;
    uint16_t phnum = (uint16_t)(in->nph + n);
    memcpy(elf_input_patch(in, offsetof(Elf64_Ehdr, e_phoff), 8), &phoff, 8);
    memcpy(elf_input_patch(in, offsetof(Elf64_Ehdr, e_phnum), 2), &phnum, 2);
    return 0;
}

int rewrite_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

/* Whether a mapped file carries a segment memtap added (any version). */
int elf_input_rewritten(const elf_input *in)
{
    for (size_t i = 0; i < in->nph; i++) {
        const GElf_Phdr *p = &in->ph[i];
        if (p->p_type == PT_LOAD && p->p_filesz >= 8 &&
            p->p_offset + 8 <= in->size &&
            memcmp(in->bytes + p->p_offset, MT_REWRITE_MAGIC, 8) == 0)
            return 1;
    }
    return 0;
}

/* The rewrite header of a mapped file, copied to h: 0, or -1 when it has
 * none (of this version). */
int elf_input_header(elf_input *in, mt_rewrite_header *h)
{
    char err[256];
    if (elf_input_check(in, 0, err, sizeof err) != 0)
        return -1;
    for (size_t i = 0; i < in->nph; i++) {
        const GElf_Phdr *p = &in->ph[i];
        if (p->p_type == PT_LOAD && p->p_filesz >= sizeof *h &&
            p->p_offset + sizeof *h <= in->size &&
            memcmp(in->bytes + p->p_offset, MT_REWRITE_MAGIC, 8) == 0) {
            memcpy(h, in->bytes + p->p_offset, sizeof *h);
            /* the whole segment in the file (a copy cut short is not
             * one memtap wrote) */
            return h->version == MT_REWRITE_VERSION &&
                           p->p_filesz <= in->size - p->p_offset &&
                           h->segment_size <= p->p_filesz
                       ? 0
                       : -1;
        }
    }
    return -1;
}
