/*
 * rewrite/stubs.h - where a window's jump lands when bytes of its rel32
 * are not free (stubs.c): an int3 (0xcc) over an instruction start the
 * jump covers, or the first byte of the next instruction, which the jump
 * shares.  The jump then goes to a stub, a `jmp` to the trampoline
 * placed at an address whose distance carries those bytes, at most 2 GiB
 * after the site: past the trampolines, or in a hole left among them (a
 * file whose trampolines take more than 2 GiB less the code would
 * otherwise have no stub within any site's reach at the distances the
 * common constraints need).  Private to rewrite/.
 */
#ifndef MEMTAP_REWRITE_STUBS_H
#define MEMTAP_REWRITE_STUBS_H

#include <stddef.h>
#include <stdint.h>

#include "sys/vec.h"

#define STUB_LEN 5            /* jmp rel32 */

/* A stretch of the segment left to stubs among the trampolines. */
typedef struct stub_hole {
    uint64_t lo, hi;
} stub_hole;

typedef struct stub_space {
    uint64_t floor;           /* stubs lie at or after it, */
    const stub_hole *holes;   /* or inside one of these (by address, all
                                 below floor) */
    size_t nholes;
    uint64_t top;             /* and end before it */
    struct stub_page *pages;  /* hash table of the pages stubs use */
    size_t npages, pages_cap;
    struct stub_hint *hints;  /* per constraint: where its last stub went */
    size_t nhints, hints_cap;
    vec stubs;                /* stub */
} stub_space;

/* One stub: a jump at `at` to `to`. */
typedef struct stub {
    uint64_t at, to;
} stub;

/* A space of stubs at or after floor, or inside holes[0..nholes) (kept
 * by the caller). */
void stub_space_init(stub_space *s, uint64_t floor, const stub_hole *holes,
                     size_t nholes);
void stub_space_free(stub_space *s);

/* Takes 5 bytes at *at for a stub jumping to `to`, such that the rel32 of
 * a jump at `from` to *at has the bytes of `mask` (each 0x00 or 0xff)
 * equal to those of `value` (bytes that must stay what they are), *at
 * in the space (at or after floor, or in a hole), and the stub reaches
 * `to`: the first free such place from the last stub of the same
 * constraint on where the site reaches there (callers go down in
 * address), else the lowest.
 * Returns 0, or -1 when there is none (or no memory). */
int stub_take(stub_space *s, uint64_t from, uint32_t mask, uint32_t value,
              uint64_t to, uint64_t *at);

/* Fills page (PAGE bytes at link-time address `page`) with the stubs that
 * lie in it (int3 between them); calls each(page, bytes, arg) for every
 * page stubs use, in address order.  Returns 0, or the first non-zero
 * each returned, or -1 without memory. */
int stub_pages(stub_space *s,
               int (*each)(uint64_t page, const uint8_t *bytes, void *arg),
               void *arg);

#endif
