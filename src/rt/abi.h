/*
 * rt/abi.h - what a rewritten ELF file and memtap's runtime agree on.
 *
 * `memtap instrument` turns a spare PT_NOTE program header into a PT_LOAD
 * segment (read + execute) that it appends to the file.  The segment
 * starts with this header, then the site table, then the flush stub and
 * the trampolines, and ends with the trap and check tables, the site table
 * compressed (what the runtime writes into each trace as it is) and the
 * records each site's entry stands for (what the runtime packs with).  Each
 * patched site jumps to its trampoline, which saves those of rcx and rdx
 * that are live below the red zone and appends {site | module tag << 24,
 * address} to the calling thread's buffer itself: loads of two slots
 * after the site table (the cursor's offset from the thread pointer, the
 * tag) and three stores (the entry's two, the cursor).  No instruction
 * on this path changes the flags.  A buffer ends at an MT_BUFFER_ALIGN
 * boundary: the trampoline finds it full when the cursor's low 16 bits
 * are 0 (a cursor of 0, no buffer yet, is full too) and calls the flush
 * stub, which saves the flags and general registers and calls the
 * runtime's flush function, which saves the extended state on memtap's
 * own stack and gives the buffer room.
 *
 * The cursor slot holds 0 in the file, and a trampoline that reads 0 there
 * logs nothing: a rewritten program run without the runtime behaves as the
 * original.  The runtime (in libmemtap.so), at start-up, makes the
 * slots' page writable for a moment, fills in the module tag and
 * the flush function's address, and last the cursor's TLS offset (never
 * 0), which turns the module's logging on.  No trampoline is written to
 * turn it on.
 *
 * Sites with no room for a jump keep their bytes in the file; the header
 * lists them as traps with a one-instruction trampoline each, and the
 * runtime writes an `int3` over their first byte and sends the SIGTRAP to
 * the trampoline.  With --profile, the first trampoline of each block with
 * memory operands also counts the block's executions through a second
 * stub (`ret` until turned on) into counters the runtime allocates.
 *
 * The loader runs the initializers of a program's libraries before
 * libmemtap.so's constructor (the preloaded library comes after them in
 * its order).  So a file with a DT_INIT gets a start stub, where its
 * DT_INIT now points:
 *   lea header(%rip), %rax; mov start_slot(%rax), %rax
 *   test %rax, %rax; je 1f
 *   push %rdi; push %rsi; push %rdx; call *%rax; pop %rdx; pop %rsi; pop %rdi
 *   1: jmp the original DT_INIT
 * The start slot holds 0 in the file; memtap's loader audit module writes
 * libmemtap.so's memtap_start_early there when the module is opened, so
 * the first rewritten library initialized starts memtap, whose
 * accesses and those of every initializer after it are then recorded.
 *
 * The log sequence of a load site (no store, no elided followers) starts
 * with a check-once slot, `jmp .+2`: when a check the site feeds needs no
 * more of its accesses (uninit --check-once), the runtime writes the
 * sequence's length into the jump's displacement, one byte, and the site
 * logs no more.  The header lists the slots (mt_check).
 */
#ifndef MEMTAP_REWRITE_ABI_H
#define MEMTAP_REWRITE_ABI_H

#include <stdint.h>

#include "memtap/trace.h"
#include "trace/format.h"

#define MT_REWRITE_MAGIC "MTREWR01"
#define MT_REWRITE_VERSION 16u  /* 16: a start stub the file's DT_INIT
                                   goes to (start_stub, start_slot); 15:
                                   traps entered by a short jump to
                                   an island (mt_trap.jumped); 14: the
                                   segment may go on past
                                   segment_size with stubs (jumps whose
                                   displacement carries the int3s of the
                                   instruction starts under them); 13:
                                   the header describes the log
                                   sequence (mt_log_shape); 12: the flush function saves the
                                   extended state, on memtap's stack; 11:
                                   followers due after later entries
                                   (memtap_site.due); 10: trampolines
                                   append their entries themselves (9:
                                   through a call of a stub the runtime
                                   patched) */
#define MT_BUFFER_ALIGN 65536u  /* entry buffers end at a multiple */

/* The site table goes into a trace in pieces of this many sites (the last
 * one shorter), one SITES chunk each; the rewriter compresses it in the
 * same pieces (mt_rewrite_header.sites_z), so that the runtime need not. */
#define MT_SITES_PER_FRAME 131072u

/* The sites of the piece of a table of nsites that starts at first. */
static inline uint32_t mt_sites_piece(uint32_t nsites, uint32_t first)
{
    return nsites - first < MT_SITES_PER_FRAME ? nsites - first
                                               : MT_SITES_PER_FRAME;
}
#define MT_SITE_BITS 24          /* site index bits; the tag is above */

enum mt_mode { MT_MODE_LOG = 0, MT_MODE_MA = 1, MT_MODE_AIA = 2 };

/* The log sequence as every trampoline holds a copy of it, for the
 * runtime to recognise one a signal interrupted: until its last store
 * (the cursor's) it has written nothing another log could not overwrite,
 * so the runtime sends it back to its start before a program handler
 * that logs runs (rewritten_handler_enter), rdx holding the address again:
 * while the pc is before `rdx_kept` rdx still does; then rcx points at
 * the entry (whose address field holds it), and from `bumped` past it. */
#define MT_LOG_BYTES 128
typedef struct mt_log_shape {
    uint8_t len;                 /* bytes; 0: not described */
    uint8_t rdx_kept;
    uint8_t bumped;              /* the cursor's store: the commit */
    uint8_t nfields;
    uint8_t fields[8];           /* the 4-byte fields each copy fills in
                                    (zeros in bytes) */
    uint64_t starts;             /* bit i: an instruction starts at i
                                    (those before the commit, < 64) */
    uint8_t full, full_call;     /* the no-room path's two instructions
                                    before the flush stub's call: a
                                    signal there waits for the flush */
    uint8_t bytes[MT_LOG_BYTES];
} mt_log_shape;

/* A segment of more than MT_HOLE_PERIOD bytes leaves holes for stubs
 * among its trampolines (rewrite/stubs.h), int3 but for the stubs: one
 * every 15 MiB, so that each 16 MiB a rel32's top byte steps through
 * holds at least one whole hole's bytes, and the holes' places modulo 16
 * MiB go round all of its sixteen MiBs (a displacement's second byte
 * fixed: its 64 KiB modulo 16 MiB lie in one hole of every sixteen). */
#define MT_HOLE_PERIOD (15ull << 20)
#define MT_HOLE_SIZE (1ull << 20)

typedef struct mt_rewrite_header {
    char magic[8];               /* MT_REWRITE_MAGIC */
    uint32_t version;
    uint32_t mode;               /* enum mt_mode */
    uint32_t nsites;
    uint16_t first_hole, nholes; /* stub holes among the trampolines: hole
                                    k (first_hole <= k < first_hole +
                                    nholes) the MT_HOLE_SIZE bytes before
                                    offset k * MT_HOLE_PERIOD */
    uint64_t segment_vaddr;      /* link-time address of this header */
    uint64_t segment_size;
    uint64_t sites;              /* offsets from the header: site table */
    uint64_t stub;               /* the flush stub */
    uint64_t tag_slot;           /* 4 bytes: the module tag << MT_SITE_BITS */
    uint64_t flush_slot;         /* 8 bytes: address of the flush function */
    uint64_t cursor_slot;        /* 8 bytes: the buffer cursor's offset from
                                    the thread pointer; 0: logging off */
    double omega;
    uint64_t chunk;
    double static_ma, static_aia;  /* the analysis' estimates, whole file */
    uint64_t source_id;          /* rewrite_source_id() of the original */
    uint32_t nblocks;            /* blocks counted (0 without --profile) */
    uint32_t ntraps;
    uint64_t blocks;             /* offset: uint64_t link-time block starts */
    uint64_t count_stub;         /* offset: in eax the block (ret -> nop) */
    uint64_t counters_slot;      /* offset: 8 bytes: address of the counters */
    uint64_t traps;              /* offset: mt_trap[ntraps], sorted by pc */
    uint64_t checks;             /* offset: mt_check[nchecks], by site */
    uint32_t nchecks;
    uint32_t nbypass;            /* used entries of bypassed */
    uint64_t bypassed[8];        /* operands each bypass rule left out
                                    (analysis_counts.bypass order) */
    uint64_t sites_z;            /* offset: the site table as zstd frames,
                                    one per MT_SITES_PER_FRAME sites, each
                                    after its length (uint32_t) */
    uint64_t sites_z_size;       /* bytes there; 0: none */
    uint64_t records;            /* offset: a byte a site, the records an
                                    entry of it stands for (what packing
                                    looks up; trace_site_records); 0: none */
    mt_log_shape log;            /* the log sequence every site copies */
    uint64_t stub_call_end;      /* offset: past the flush stub's call */
    uint64_t start_stub;         /* offset: the start stub; 0: none (the
                                    file has no DT_INIT) */
    uint64_t start_slot;         /* offset: 8 bytes: the function the start
                                    stub calls; 0: none yet */
} mt_rewrite_header;

/* What the start stub begins with: lea header(%rip), %rax (the bytes
 * before its displacement), for the audit module to find the header. */
#define MT_START_LEA "\x48\x8d\x05"

/* A check-once slot: the `jmp .+2` at `slot` (offset from the header)
 * before the log sequence of site `site`, which `skip` bytes after the
 * jump end. */
typedef struct mt_check {
    uint32_t site;
    uint32_t slot;
    uint32_t skip;
    uint32_t reserved;
} mt_check;

/* The string operations the runtime records from their registers: movs,
 * stos and lods as one block event each; cmps and scas, which stop where
 * the data says, as the loads of each element they compare (the runtime
 * finds where they stop, as the fault engine sees them one by one). */
enum mt_string { MT_STRING_NONE = 0, MT_STRING_MOVS, MT_STRING_STOS,
                 MT_STRING_LODS, MT_STRING_CMPS, MT_STRING_SCAS };
/* mt_trap.rep: no prefix, rep/repe (F3), repne (F2). */
enum mt_rep { MT_REP_NONE = 0, MT_REP_E = 1, MT_REP_NE = 2 };

/* An int3: a site reached through it (the trampoline runs it in its
 * place), or a string operation, whose block event the runtime records
 * from the registers before execution goes on at tramp. */
typedef struct mt_trap {
    uint64_t pc;                 /* link-time address of the int3 */
    uint64_t tramp;              /* where execution goes on */
    uint64_t insn;               /* a string operation's address, else 0 */
    uint8_t string;              /* enum mt_string */
    uint8_t size;                /* bytes per element */
    uint8_t rep;                 /* enum mt_rep: repeated up to rcx times */
    uint8_t past_leader;         /* an instruction start inside a window,
                                    after the leader of an operand elided
                                    at or after it: entered here (by a
                                    way no analysis saw), that operand's
                                    records are lost */
    uint8_t jumped;              /* reached by a short jump at pc to an
                                    island in padding that jumps to tramp:
                                    the runtime leaves pc's bytes */
    uint8_t reserved[3];
} mt_trap;

/* One instrumented memory operand, as the trace's SITES chunks hold it:
 * an elided one (memtap_site.elided) is logged through its leader. */
typedef memtap_site mt_site;

/* What a trampoline appends to a thread's buffer. */
typedef struct mt_entry {
    uint32_t site;               /* index | module tag << MT_SITE_BITS */
    uint32_t reserved;
    uint64_t addr;
} mt_entry;

#endif
