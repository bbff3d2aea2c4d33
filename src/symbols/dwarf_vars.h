/*
 * dwarf_vars.h - the variables of one DWARF with fixed addresses, for
 * naming static data (dwarf_vars.c).  Private to symbols/.
 */
#ifndef MEMTAP_SYMBOLS_DWARF_VARS_H
#define MEMTAP_SYMBOLS_DWARF_VARS_H

#include <elfutils/libdw.h>
#include <stddef.h>
#include <stdint.h>

#include "symbols/var_span.h"

typedef struct dwarf_vars dwarf_vars;

/* Reads every variable of dwarf with a DW_OP_addr location (dwarf stays
 * the caller's and must outlive the result); NULL when out of memory. */
dwarf_vars *dwarf_vars_load(Dwarf *dwarf);
void dwarf_vars_destroy(dwarf_vars *vs);

/* The variable holding addr: its name and first address, and the end of
 * the range from there on that it names (where it ends or the next
 * variable begins); 0 when none. */
int dwarf_vars_at(dwarf_vars *vs, uint64_t addr, const char **name,
                  uint64_t *start, uint64_t *end);
/* Names addr from the variable holding it down to the field or element
 * ("config.limits[3].hi", with "+N" for bytes inside a scalar) into buf:
 * 1, or 0 when no variable holds addr. */
int dwarf_vars_name(dwarf_vars *vs, uint64_t addr, char *buf, size_t cap);
/* How the names around addr read, for a caller that makes them itself:
 * the text of addr's name up to its row's index or its scalar's offset
 * in buf ("grid[3][", "cfg.limits[2].hi"), the range of addresses whose
 * names are that text and their index or offset (var_span.h), as
 * dwarf_vars_name names them.  0, or -1 when no variable holds addr. */
int dwarf_vars_span(dwarf_vars *vs, uint64_t addr, char *buf, size_t cap,
                    var_span *out);

/* The type of the blocks allocated at the call at pc: the struct, union
 * or class that the variables and parameters of the call's scopes, out to
 * its function, and the function's return type point to: the one of
 * block_size bytes, else the one whose size divides block_size (an array
 * of them).  1 with its DIE in *type and "struct name" in name; 0 when
 * none or more than one. */
int dwarf_vars_block_type(dwarf_vars *vs, uint64_t pc, uint64_t block_size,
                          uint64_t *type, char *name, size_t cap);
/* Names byte off of a block of block_size bytes holding `type` (one, or
 * an array of them: "[2].next"): its member path ("limits[3].hi", "+N"
 * inside a scalar) into buf; 0 when the type cannot be read. */
int dwarf_vars_member(dwarf_vars *vs, uint64_t type, uint64_t block_size,
                      uint64_t off, char *buf, size_t cap);

#endif
