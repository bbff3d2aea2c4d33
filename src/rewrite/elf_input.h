/*
 * rewrite/elf_input.h - the rewriter's input file (mapped copy-on-write,
 * patched in place, checked) and the copy it writes (elf_input.c).
 * Private to rewrite/.
 */
#ifndef MEMTAP_REWRITE_ELF_INPUT_H
#define MEMTAP_REWRITE_ELF_INPUT_H

#include <gelf.h>
#include <stddef.h>
#include <stdint.h>

#include "elf/elf_file.h"
#include "rt/abi.h"
#include "sys/page.h"

typedef struct elf_input {
    int fd;
    uint8_t *bytes;            /* the file, mapped copy-on-write */
    size_t size;
    uint8_t *dirty;            /* a bit per page of bytes that was patched */
    GElf_Ehdr eh;
    GElf_Phdr *ph;
    size_t nph;
    uint64_t load_end;         /* highest end of a PT_LOAD (vaddr) */
} elf_input;

/* err gets the message: -1. */
int rewrite_fail(char *err, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Maps path privately: patches change memtap's copy of a page only, and
 * pages nothing reads are never loaded.  0, or -1 with err.  in->fd must be
 * -1 before, so that elf_input_unmap is right either way. */
int elf_input_map(const char *path, elf_input *in, char *err, size_t cap);
void elf_input_unmap(elf_input *in);

/* Reads the program headers, and with `rewriting` checks what can be
 * rewritten: a dynamically linked x86-64 executable or shared library with
 * a PT_NOTE header to spare.  0, or -1 with err. */
int elf_input_check(elf_input *in, int rewriting, char *err, size_t cap);

/* Bytes [off, off+len) of the copy, about to change. */
uint8_t *elf_input_patch(elf_input *in, size_t off, size_t len);
/* File offset of the loaded bytes [vaddr, vaddr+len), or -1. */
int64_t elf_input_offset(const elf_input *in, uint64_t vaddr, uint64_t len);
/* File offset of the value of the file's DT_INIT, which *init gets, or
 * -1 when it has none. */
int64_t elf_input_dt_init(const elf_input *in, uint64_t *init);
/* FNV-1a of the file's bytes: 0, or -1. */
int elf_input_id(const elf_input *in, uint64_t *id);

/* Whether the file carries a segment memtap added (any version). */
int elf_input_rewritten(const elf_input *in);
/* The rewrite header of the file, copied to h: 0, or -1 when it has none
 * (of this version). */
int elf_input_header(elf_input *in, mt_rewrite_header *h);

/* A PT_LOAD memtap adds (r-x): [vaddr, vaddr+size) at file offset off. */
typedef struct added_load {
    uint64_t off, vaddr, size;
} added_load;

/* The bytes of the copy's program header table with nadded loads. */
size_t elf_input_phdrs_size(const elf_input *in, size_t nadded);
/* Writes the copy's program header table to out: the input's headers and
 * the n added PT_LOADs after its last PT_LOAD (in address order, as the
 * loader maps them); PT_PHDR, if any, names the table itself, at file
 * offset `at` and link-time address `vaddr`, where the ELF header now
 * points.  0, or -1 when the table is unusual. */
int elf_input_phdrs(elf_input *in, const added_load *added, size_t n,
                    uint64_t at, uint64_t vaddr, uint8_t *out);

/* Writes the copy to path (mode of in_path): the input with its patched
 * pages, zeros up to b_at, blen bytes b there (the segment), and
 * tail_len bytes tail at tail_at (the stubs' pages).  0, or -1 with err. */
int elf_input_write(const char *path, const char *in_path,
                    const elf_input *in, const uint8_t *b, size_t blen,
                    size_t b_at, const uint8_t *tail, size_t tail_len,
                    size_t tail_at, char *err, size_t cap);

/* Whether two paths name one file. */
int rewrite_same_file(const char *a, const char *b);

#endif
