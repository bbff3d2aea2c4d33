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

typedef struct elf_input {
    int fd;
    uint8_t *bytes;            /* the file, mapped copy-on-write */
    size_t size;
    uint8_t *dirty;            /* a bit per page of bytes that was patched */
    GElf_Ehdr eh;
    GElf_Phdr *ph;
    size_t nph;
    int note;                  /* index of the PT_NOTE to convert */
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
/* FNV-1a of the file's bytes: 0, or -1. */
int elf_input_id(const elf_input *in, uint64_t *id);

/* Whether the file carries a segment memtap added (any version). */
int elf_input_rewritten(const elf_input *in);
/* The rewrite header of the file, copied to h: 0, or -1 when it has none
 * (of this version). */
int elf_input_header(elf_input *in, mt_rewrite_header *h);

/* Turns the PT_NOTE header into a PT_LOAD of [vaddr, vaddr+size) at file
 * offset off, keeping the PT_LOADs in ascending order: 0, or -1 when the
 * program header table is unusual. */
int elf_input_place_segment(elf_input *in, uint64_t off, uint64_t vaddr,
                            uint64_t size);
/* Writes the copy to path (mode of in_path): the input with its patched
 * pages, zeros up to b_at, then the segment b.  0, or -1 with err. */
int elf_input_write(const char *path, const char *in_path,
                    const elf_input *in, const uint8_t *b, size_t blen,
                    size_t b_at, char *err, size_t cap);

/* Whether two paths name one file. */
int rewrite_same_file(const char *a, const char *b);

#endif
