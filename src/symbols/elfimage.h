/*
 * elfimage.h - one ELF file as the symbolizer needs it: its symbols sorted
 * by address, its sections, its build-id, and (when present) its DWARF
 * line table and global variables.  All addresses are link-time addresses.
 */
#ifndef MEMTAP_SYMBOLS_ELFIMAGE_H
#define MEMTAP_SYMBOLS_ELFIMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "elf/elf_file.h"
#include "symbols/var_span.h"

typedef struct elf_symbol {
    uint64_t addr;
    uint64_t size;
    const char *name;     /* demangled when it was a C++ name (once a
                             lookup has returned it) */
    uint8_t is_func;
    uint8_t mangled;      /* name is still the C++ one: demangled when a
                             lookup returns it */
} elf_symbol;

typedef struct elf_section {
    uint64_t addr;
    uint64_t size;
    const char *name;
} elf_section;

typedef struct elf_image elf_image;

/* Loads path: an elf_status.  On success *out owns everything it points
 * to. */
int elf_image_open(const char *path, elf_image **out);
void elf_image_close(elf_image *img);

/* The GNU build-id (NULL when absent). */
const uint8_t *elf_image_build_id(const elf_image *img, size_t *len);
/* ELF type (ET_EXEC, ET_DYN, ...) and whether it has a PT_INTERP. */
int elf_image_type(const elf_image *img);
int elf_image_has_interp(const elf_image *img);
/* A shared library, not a program: ET_DYN with no PT_INTERP and no
 * DF_1_PIE (a static-pie program has the flag). */
int elf_image_is_library(const elf_image *img);
/* The program interpreter's path ("" when there is none or it is odd). */
const char *elf_image_interp(const elf_image *img);

/* Whether the dynamic symbol table refers to (imports) name. */
int elf_image_imports(const elf_image *img, const char *name);

/* The symbol containing addr (functions when want_func, else any). */
/* The symbol called name (demangled for C++), or NULL. */
const elf_symbol *elf_image_symbol_named(const elf_image *img,
                                         const char *name);
const elf_symbol *elf_image_symbol(const elf_image *img, uint64_t addr,
                                   int want_func);
/* The allocated section containing addr. */
const elf_section *elf_image_section(const elf_image *img, uint64_t addr);

/* Where no DWARF variable and no symbol holds addr and a section does:
 * 1, with the addresses around it named the same way (no variable, no
 * symbol, the same section, as elf_image_variable_at, elf_image_symbol
 * and elf_image_section see them) in [*lo, *hi); else 0. */
int elf_image_section_span(elf_image *img, uint64_t addr, uint64_t *lo,
                           uint64_t *hi);

/* Source file and line of a code address, from DWARF; 0 if unknown. */
int elf_image_line(elf_image *img, uint64_t addr, const char **file,
                   int *line);

/* The functions a code address is in, from DWARF: the inlined ones
 * innermost first, each with the line it is at there, then the function
 * they were inlined into, with the line of the outermost inlined call.
 * Fills out[0..max) and returns how many (0 without DWARF for addr);
 * names and files are the image's. */
typedef struct elf_frame {
    const char *function;  /* NULL when the DWARF has none */
    const char *file;      /* NULL when unknown */
    int line;
} elf_frame;
int elf_image_frames(elf_image *img, uint64_t addr, elf_frame *out, int max);

/* Names the data at addr from DWARF variables down to the field or element
 * ("config.limits[3].hi", with "+N" for bytes inside a scalar).  Writes into
 * buf and returns 1, or returns 0 when no variable holds addr. */
int elf_image_variable(elf_image *img, uint64_t addr, char *buf, size_t cap);
/* How the names around addr read (dwarf_vars_span); -1 without a
 * variable's DWARF for addr. */
int elf_image_variable_span(elf_image *img, uint64_t addr, char *buf,
                            size_t cap, var_span *out);
/* The variable holding addr: its name and first address, and where the
 * range it names from there ends (dwarf_vars_at); 0 when none. */
int elf_image_variable_at(elf_image *img, uint64_t addr, const char **name,
                          uint64_t *start, uint64_t *end);

/* The type of the blocks the call at code address pc allocates, and the
 * names of their bytes (dwarf_vars_block_type, dwarf_vars_member). */
int elf_image_block_type(elf_image *img, uint64_t pc, uint64_t block_size,
                         uint64_t *type, char *name, size_t cap);
int elf_image_member(elf_image *img, uint64_t type, uint64_t block_size,
                     uint64_t off, char *buf, size_t cap);

/* Demangles a C++ name into a string the caller frees (NULL if not C++). */
char *symbols_demangle(const char *name);

#endif
