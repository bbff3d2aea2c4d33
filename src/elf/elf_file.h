/*
 * elf/elf_file.h - one x86-64 ELF file as every offline part of memtap
 * opens it (the static analysis, the symbolizer, the rewriter): checked
 * to be a 64-bit x86-64 ELF file, its program headers, its interpreter,
 * its GNU build-id; whether a section header agrees with the program
 * headers (section headers are advisory); its symbols with one ranking
 * rule; and one status table for all of it.  DWARF is the symbolizer's.
 */
#ifndef MEMTAP_ELF_ELF_FILE_H
#define MEMTAP_ELF_ELF_FILE_H

#include <gelf.h>
#include <stddef.h>
#include <stdint.h>

typedef enum elf_status {
    ELF_OK = 0,
    ELF_E_OPEN = -1,        /* cannot open or read the file (errno) */
    ELF_E_NOT_ELF = -2,
    ELF_E_NOT_X86_64 = -3,
    ELF_E_CORRUPT = -4,     /* headers or sections point outside the file */
    ELF_E_NOMEM = -5,
    ELF_E_BAD_TYPE = -6,    /* a core file or other non-program ELF */
    ELF_E_NO_TEXT = -7,     /* no executable section with bytes */
} elf_status;

/* The message of an elf_status (ELF_E_OPEN: of errno). */
const char *elf_strerror(int status);

typedef struct elf_file {
    int fd;                 /* -1 for a file in memory */
    Elf *elf;
    GElf_Ehdr eh;
    GElf_Phdr *ph;          /* the program headers, nph of them */
    size_t nph;
    int has_interp;
    int pie;                /* DT_FLAGS_1 says DF_1_PIE: a program, even
                               without PT_INTERP (static-pie) */
    char interp[256];       /* PT_INTERP's path ("" when odd or long) */
    uint8_t build_id[64];   /* from the SHT_NOTE sections */
    size_t build_id_len;
} elf_file;

/* Opens path (a regular file only: a FIFO would block, a device be read
 * forever), read through a map.  An elf_status; on failure f is closed. */
int elf_file_open(const char *path, elf_file *f);
/* The same checks on a file already in memory (kept by the caller). */
int elf_file_open_memory(void *bytes, size_t size, elf_file *f);
void elf_file_close(elf_file *f);

/* Whether a section header of a program or library is where its program
 * headers put it: inside one PT_LOAD, its file bytes at the same place in
 * the segment as its address.  Always for object files.  A section header
 * that disagrees would have memtap read bytes the program never has
 * there. */
int elf_file_section_placed(const elf_file *f, const GElf_Shdr *sh);

/* Rank of a symbol among those at one address, lower first: global, weak,
 * local; then fewer leading underscores. */
int elf_symbol_rank(const GElf_Sym *s, const char *name);

/* Calls fn for every named symbol of the tables of type `table`
 * (SHT_SYMTAB or SHT_DYNSYM) of elf (a file's own Elf or its debug
 * file's); *found says whether there was such a table.  ELF_OK,
 * ELF_E_CORRUPT, or what fn returned when not 0 (which stops the walk). */
typedef int (*elf_symbol_fn)(void *arg, const GElf_Sym *s, const char *name);
int elf_each_symbol(Elf *elf, GElf_Word table, elf_symbol_fn fn, void *arg,
                    int *found);

#endif
