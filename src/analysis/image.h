/*
 * image.h - one ELF file as the static engine sees it: its executable
 * sections with their bytes, its allocated sections (to recognise static
 * addresses), and its functions, found from .symtab, .dynsym, the
 * .eh_frame FDE ranges (stripped files), Go's function table and the
 * entry point.  Object files
 * (ET_REL) get their sections laid out one after the other, as a linker
 * would, so that every address is unique.
 */
#ifndef MEMTAP_ANALYSIS_IMAGE_H
#define MEMTAP_ANALYSIS_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "elf/elf_file.h"

/* Where a function's extent came from. */
typedef enum func_source {
    FUNC_SYMTAB = 0,
    FUNC_DYNSYM,
    FUNC_EH_FRAME,
    FUNC_GO,        /* an entry of Go's .gopclntab function table */
    FUNC_ENTRY,
    FUNC_PLT,       /* a 16-byte entry of .plt, .plt.sec or .plt.got */
    FUNC_GAP,       /* code in an executable section outside any function */
} func_source;

typedef struct image_section {
    uint64_t addr, size;
    const uint8_t *data;   /* NULL for NOBITS */
    const char *name;
    uint8_t exec;
} image_section;

typedef struct image_func {
    uint64_t start, end;   /* [start, end) */
    const char *name;      /* symbol name, or NULL (stripped) */
    uint8_t source;        /* func_source */
} image_func;

/* What memory at a link-time address is while the program runs, from the
 * program headers: writable data (PF_W, outside the PT_GNU_RELRO pages
 * the loader makes read-only), read-only, or none of the image's. */
typedef enum image_memory {
    IMAGE_MEM_NONE = 0,
    IMAGE_MEM_WRITABLE,
    IMAGE_MEM_READ_ONLY,
} image_memory;

/* Bytes [start, end) of an executable section. */
typedef struct image_range {
    uint64_t start, end;
} image_range;

typedef struct image_segment {
    uint64_t vaddr, memsz;
    uint32_t flags;        /* PF_R | PF_W | PF_X */
} image_segment;

typedef struct code_image {
    const char *path;
    int type;              /* ET_EXEC, ET_DYN or ET_REL */
    uint64_t entry;
    image_section *secs;   /* allocated sections, by address */
    size_t nsecs;
    image_func *funcs;     /* sorted by start, non-overlapping */
    size_t nfuncs;
    image_range *objects;  /* data in executable sections, by address: the
                              STT_OBJECT symbols there (OpenSSL's tables) */
    size_t nobjects;
    image_range copied;    /* code the program copies at run time (V8's
                              builtins): among objects, left as it is */
    int stripped;          /* no .symtab */
    image_segment *segs;   /* PT_LOAD, as in the file */
    size_t nsegs;
    uint64_t relro_lo, relro_hi; /* read-only after relocation (pages) */
    void *priv;
} code_image;

/* An elf_status (ELF_E_BAD_TYPE, ELF_E_NO_TEXT besides the file's own). */
int image_open(const char *path, code_image **out);
void image_close(code_image *img);

/* The bytes at addr in an executable section, and how many follow. */
const uint8_t *image_code(const code_image *img, uint64_t addr, size_t *avail);
/* Reads n bytes of initialized data at addr (any allocated section);
 * returns 0, or -1 when they are not all in the file. */
int image_read(const code_image *img, uint64_t addr, void *buf, size_t n);
/* The allocated section holding addr, or NULL. */
const image_section *image_section_at(const code_image *img, uint64_t addr);
/* Whether a displacement of a non-PIC executable is the address of its own
 * static data (a section that is not executable). */
int image_is_static_data(const code_image *img, uint64_t addr);
/* What the memory at a link-time address is at run time. */
image_memory image_memory_at(const code_image *img, uint64_t addr);

#endif
