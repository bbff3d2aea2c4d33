/*
 * symbolizer.h - turns the numbers of a trace into the names of the user's
 * source: code addresses as function+offset (and file:line), data addresses
 * as what holds them (variable and field, ELF symbol, section, module or
 * memory region) as a structured value, with its text made apart.  Works
 * from the trace's module table and maps snapshot after the run; heap
 * blocks are the namer's (namer.h).
 */
#ifndef MEMTAP_SYMBOLS_SYMBOLIZER_H
#define MEMTAP_SYMBOLS_SYMBOLIZER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "memtap/trace.h"
#include "symbols/heapmap.h"
#include "symbols/var_span.h"

typedef struct symbolizer symbolizer;

/* Builds a symbolizer for the trace's modules.  Binaries are opened on
 * first use; a missing binary or one whose build-id differs from the traced
 * one is reported once on warn (may be NULL) and its addresses stay raw. */
int symbolizer_create(const memtap_trace *t, FILE *warn, symbolizer **out);
/* Takes what the trace has learned since (a followed trace's modules and
 * maps, trace/follow.h); the images already read are kept.  1 when the
 * modules or the maps changed, 0 when not, or a negative status. */
int symbolizer_refresh(symbolizer *s);
void symbolizer_destroy(symbolizer *s);

/* "function+off", "module+0xoff" or "0xaddr". */
void symbolizer_code(symbolizer *s, uint64_t pc, char *buf, size_t cap);

/* The allocation site of heap block b, as the reports name all the blocks
 * made there together: "malloc@main+51", "calloc@...", "realloc@...",
 * "mmap@..." (its code at most 255 bytes). */
/* How a block of kind `kind` (a heap event's) was made, as that name
 * tells blocks of one site apart: 0 malloc, 1 calloc, 2 realloc, 3 mmap. */
unsigned symbolizer_site_how(uint8_t kind);
void symbolizer_site_text(symbolizer *s, const heap_block *b, char *buf,
                          size_t cap);

/* The name of the function holding pc alone (no offset); 0 when unknown. */
int symbolizer_function(symbolizer *s, uint64_t pc, char *buf, size_t cap);

/* The functions a code address is in, the inlined ones first (with
 * DWARF; without, the one function of its symbol): "name" and "file:line"
 * ("" when unknown) of each, at most max, and how many (0: none known). */
typedef struct symbolizer_frame {
    char function[256];
    char line[256];
    int inlined;         /* inlined into the next frame */
} symbolizer_frame;
int symbolizer_frames(symbolizer *s, uint64_t pc, symbolizer_frame *out,
                      int max);

/* The site a heap event's block is named after: the first frame of its
 * call stack outside allocator wrappers (symbols/alloc_stacks.h), else
 * its call site. */
uint64_t symbolizer_alloc_site(symbolizer *s, const memtap_record *r);
/* Has heap map m name its blocks after symbolizer_alloc_site (s NULL:
 * after their call sites). */
void symbolizer_name_sites(symbolizer *s, heap_map *m);
/* One key per distinct call stack (alloc_stacks_key). */
uint32_t symbolizer_stack_key(symbolizer *s, uint32_t id);
/* Call stack id of the trace, frame by frame from the innermost: each
 * function at each return address (its call: the byte before), those
 * inlined there first, as "function file:line", " (inlined)" after an
 * inlined one; each(arg, pc, text) for each, until it returns non-zero
 * (returned).  0 when the trace has no such stack. */
int symbolizer_stack_frames(symbolizer *s, uint32_t id,
                            int (*each)(void *arg, uint64_t pc, const char *text),
                            void *arg);

/* "file:line" of pc; returns 0 when unknown. */
int symbolizer_line(symbolizer *s, uint64_t pc, char *buf, size_t cap);

/* The type of the heap blocks an allocation site makes, from the DWARF of
 * its code (dwarf_vars_block_type: the record the variables around the
 * call, or its function's return type, point to, of the blocks' size or
 * else one they hold an array of). */
typedef struct symbolizer_type {
    uint32_t module;
    uint64_t die;
    char name[64];      /* "struct node" */
} symbolizer_type;
/* 1 with *out for the call returning to site, 0 when unknown. */
int symbolizer_block_type(symbolizer *s, uint64_t site, uint64_t block_size,
                          symbolizer_type *out);
/* The member path of byte off in a block of block_size bytes of type t
 * ("next", "limits[3].hi", "[2].key" in an array of them); 0 when none. */
int symbolizer_member(symbolizer *s, const symbolizer_type *t, uint64_t block_size,
                      uint64_t off, char *buf, size_t cap);

/* What holds a data address, in the program's names. */
typedef enum data_kind {
    DATA_UNKNOWN,    /* nothing is known: only the number */
    DATA_HEAP,       /* a block of the heap map (named by the namer) */
    DATA_VARIABLE,   /* a DWARF variable, named down to its field */
    DATA_SYMBOL,     /* an ELF symbol */
    DATA_SECTION,    /* a module's section, outside its symbols */
    DATA_MODULE,     /* a module, outside its sections */
    DATA_REGION,     /* a region of the maps snapshot ("[unknown]" when
                        in none: then start is 0) */
} data_kind;

typedef struct data_name {
    data_kind kind;
    uint64_t addr;
    uint64_t start;      /* the holder's first address (a module's base for
                            DATA_MODULE): addr - start is the offset */
    uint64_t end;        /* DATA_VARIABLE: [start, end) is named the same
                            way (the same kind, object and region); 0 when
                            not known */
    uint64_t same_lo, same_hi; /* the addresses named the same way (kind,
                            object, start, region): [same_lo, same_hi);
                            both 0 when not known */
    const char *object;  /* variable, symbol or section name; the module's
                            base name (DATA_MODULE); the region */
    const char *module;  /* the module's base name (VARIABLE to MODULE) */
    const char *region;  /* "[heap]", "[stack]", "[prog]", "[anon]", ... */
    heap_block block;    /* DATA_HEAP: the block as it was */
} data_name;

/* Names addr outside the heap blocks (which are the caller's to try
 * first): a module's variable, symbol, section or the module itself, else
 * the region holding it. */
void symbolizer_data(symbolizer *s, uint64_t addr, data_name *out);

/* The text of a name outside the heap: "var.field[2]+off", "symbol+off",
 * "module:.section+off", "module+0xoff", "[region]+off", "0xaddr". */
void symbolizer_data_text(symbolizer *s, const data_name *d, char *buf,
                          size_t cap);

/* The text of a section's, symbol's, region's or module's name up to its
 * offset ("module:.section+", "symbol+", "[region]+", "module+0x"), as
 * symbolizer_data_text begins it, and the base the offset follows in
 * (10, or 16); 0 for the other kinds. */
unsigned symbolizer_data_prefix(const data_name *d, char *buf, size_t cap);
/* For a DATA_VARIABLE: how the names around its address read
 * (dwarf_vars_span), within [same_lo, same_hi); -1 for other kinds or
 * without DWARF. */
int symbolizer_data_span(symbolizer *s, const data_name *d, char *buf,
                         size_t cap, var_span *out);

/* "00" to "99": a number's decimal digits two at a time. */
extern const char symbolizer_dec_pairs[201];

/* The digits of v in base 10 or 16, written backwards to end (24 bytes
 * of room before it); returns where they start. */
static inline char *symbolizer_digits(char *end, uint64_t v, unsigned base)
{
    if (base == 16) { /* (a constant base either way: no division) */
        do
            *--end = "0123456789abcdef"[v & 15];
        while ((v >>= 4) != 0);
        return end;
    }
    for (; v >= 100; v /= 100) { /* two digits a step */
        end -= 2;
        memcpy(end, symbolizer_dec_pairs + 2 * (v % 100), 2);
    }
    if (v >= 10) {
        end -= 2;
        memcpy(end, symbolizer_dec_pairs + 2 * v, 2);
    } else {
        *--end = (char)('0' + v);
    }
    return end;
}

/* The text of a name's holder outside the heap, without the offset: the
 * variable (not its field), the symbol, "module:.section", the module, the
 * region, "0xaddr". */
void symbolizer_object_text(const data_name *d, char *buf, size_t cap);

/* Name of the memory region holding addr: "[heap]", "[stack]", "[prog]"
 * (a module's basename), "[anon]", ...; "[unknown]" when nothing holds it.
 * Blocks of the heap map are the caller's to name first.  [*lo, *hi): the
 * addresses of the module's segment that get the same answer (empty for
 * an address of no module). */
const char *symbolizer_region(symbolizer *s, uint64_t addr, uint64_t *lo,
                              uint64_t *hi);

/* Path of the module with the trace's module id, or NULL. */
const char *symbolizer_module_path(const symbolizer *s, uint64_t id);

#endif
