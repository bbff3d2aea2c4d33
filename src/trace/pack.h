/*
 * pack.h - the bytes of a packed event chunk (MEMTAP_CHUNK_PACKED, see
 * memtap/trace.h): records as deltas from the record before, and access
 * runs of {site, address} pairs with two predictors, of each site's next
 * address and of the site that follows each site.  The writer (in traced
 * processes: no allocation, no stdio) and the reader share it, so both
 * keep the same state from item to item.
 */
#ifndef MEMTAP_TRACE_PACK_H
#define MEMTAP_TRACE_PACK_H

#include <stddef.h>
#include <stdint.h>

#include "memtap/trace.h"
#include "trace/format.h"

/* The most bytes one packed record takes (MEMTAP_CHUNK_PACKED). */
#define TRACE_PACKED_MAX 96u
/* Slots of the address and next-site predictors of access runs (trace.h):
 * format 5's, of which formats 3 and 4 used the first 1024. */
#define TRACE_SITE_SLOT_BITS 13
#define TRACE_SITE_SLOT_BITS_4 10
#define TRACE_SITE_SLOTS (1u << TRACE_SITE_SLOT_BITS)
/* Slots a packer notes as it sets them, so that starting the next chunk
 * clears only those (clearing all 96 KiB took threads 0.06 ns a record);
 * past this many it clears all. */
#define TRACE_TOUCHED_MAX 1024u
/* The most bytes one entry of an access run takes, and a run's framing
 * (mark, entry count, first sequence number). */
#define TRACE_ENTRY_MAX 15u
#define TRACE_RUN_FRAME 13u

/* What packing carries from item to item inside one chunk; writer and
 * reader keep the same. */
typedef struct trace_packer {
    /* of the last record (seq: of the last run's last record too) */
    struct {
        uint64_t seq, pc, addr, aux;
    } prev;
    uint32_t prev_site;
    uint32_t ntouched;                 /* slots set since the chunk began */
    uint16_t touched[TRACE_TOUCHED_MAX]; /* the first of them (some twice) */
    uint64_t slots[TRACE_SITE_SLOTS];  /* a site's last address */
    uint32_t next[TRACE_SITE_SLOTS];   /* the site that last followed */
} trace_packer;

/* The sites of the modules, indexed by tag, as the writer and the reader
 * know them (a table with no sites: an unknown tag). */
typedef struct trace_site_table {
    uint64_t bias;
    const memtap_site *sites;
    uint32_t nsites;
    const uint8_t *records;        /* optional: trace_site_records() of
                                      each site, for the writer's speed */
} trace_site_table;

typedef struct trace_sites {
    const trace_site_table *tabs;
    uint32_t ntabs;
} trace_sites;

/* Fills records[0..nsites) of a table (see trace_site_table). */
void trace_site_records_fill(const trace_sites *s, uint32_t tag,
                             uint8_t *records);

/* One logged access as rewritten code appends it (rt/abi.h). */
typedef struct trace_entry {
    uint32_t site;                 /* index | tag << MEMTAP_SITE_BITS */
    uint32_t reserved;
    uint64_t addr;
} trace_entry;

/* The most records one entry stands for (a leader and its followers,
 * each a load and a store). */
#define TRACE_ENTRY_RECORDS_MAX (2u * (1u + MEMTAP_FOLLOWERS_MAX))

/* The records an entry naming `site` stands for, followers included
 * (*tab and *index say where the site is); 0 when the tables do not know
 * the site, it is elided, stands for nothing, or its followers are not
 * elided sites of the table (due ones, due at one). */
static inline uint32_t trace_site_records(const trace_sites *s, uint32_t site,
                                          const trace_site_table **tab,
                                          uint32_t *index)
{
    uint32_t tag = site >> MEMTAP_SITE_BITS;
    uint32_t i = site & ((1u << MEMTAP_SITE_BITS) - 1);
    if (!s || tag >= s->ntabs || i >= s->tabs[tag].nsites)
        return 0;
    const trace_site_table *t = &s->tabs[tag];
    const memtap_site *x = &t->sites[i];
    uint32_t k = (uint32_t)(x->read != 0) + (x->write != 0);
    if (x->elided || !k)
        return 0;
    if (x->followers) {
        if (x->followers > MEMTAP_FOLLOWERS_MAX ||
            x->followers >= t->nsites - i)
            return 0;
        for (uint32_t f = 1; f <= x->followers; f++) {
            uint32_t kf = (uint32_t)(x[f].read != 0) + (x[f].write != 0);
            if (!x[f].elided || !kf || x[f].due >= t->nsites - i)
                return 0;
            k += kf;
        }
    }
    *tab = t;
    *index = i;
    return k;
}

/* The records of followers whose due site (memtap_site.due) is still to
 * come, in the order their leaders' entries came, each with its stretch:
 * the due site's module and index, and its leader's. */
typedef struct trace_due {
    uint32_t tag, lo, due;
} trace_due;

typedef struct trace_deferred {
    uint32_t n;
    trace_due at[MEMTAP_DEFERRED_MAX];
    memtap_record r[MEMTAP_DEFERRED_MAX];
} trace_deferred;

/* The most records trace_entry_expand() writes for one entry. */
#define TRACE_EXPAND_MAX (TRACE_ENTRY_RECORDS_MAX + MEMTAP_DEFERRED_MAX)

/* Writes into out (room for TRACE_EXPAND_MAX) the records that come with
 * entry e of a stream of entries, with d the followers' records still due
 * (empty, {0}, before the first entry): those due before it, its own,
 * those due after it; numbered from 0.  Returns how many: 0 for an
 * unknown site (which leaves d as it was). */
size_t trace_entry_expand(const trace_sites *s, trace_deferred *d,
                          const trace_entry *e, memtap_record *out);

/* Writes the records still due in d into out (room for
 * MEMTAP_DEFERRED_MAX), numbered from 0, and empties d: at the end of a
 * stream of entries.  Returns how many. */
size_t trace_deferred_flush(trace_deferred *d, memtap_record *out);

/* The entries of a stretch of code a run must not end inside of: a
 * follower's due site comes at most this many entries after its leader
 * (`memtap instrument` keeps it so). */
#define TRACE_WINDOW_ENTRIES 8u

/* Where entries e[0..n) may be cut without reordering records: the
 * longest prefix after which no follower's records are still due (its
 * due site not yet reached), looking TRACE_WINDOW_ENTRIES back; n when
 * none are. */
size_t trace_window_start(const trace_sites *s, const trace_entry *e,
                          size_t n);

/* What trace_run_pack() may pack past its max_records and limit to end a
 * run where no follower's records are still due. */
#define TRACE_RUN_OVER_RECORDS (TRACE_WINDOW_ENTRIES * TRACE_ENTRY_RECORDS_MAX)
#define TRACE_RUN_OVER_BYTES (TRACE_WINDOW_ENTRIES * TRACE_ENTRY_MAX)

/* Makes p a packer at the start of a chunk. */
void trace_packer_init(trace_packer *p);

/* Starts the next chunk with p (made by trace_packer_init, or memory that
 * was all zeros): nothing before. */
void trace_packer_reset(trace_packer *p);

/* Packs one record at out (room for TRACE_PACKED_MAX); returns the end.
 * Its kind must not be a run mark (MEMTAP_RUN_MARK*). */
uint8_t *trace_pack_record(trace_packer *p, const memtap_record *r,
                           uint8_t *out);

/*
 * Packs entries from *e on as the body of one access run at out, while the
 * run's bytes stay below limit (framing included) and its records at most
 * max_records, and then on, up to TRACE_RUN_OVER_BYTES and
 * TRACE_RUN_OVER_RECORDS past them, while a follower's records are still
 * due (trace_window_start); entries of sites the tables do not know are
 * left out.
 * Moves *e past the entries taken, adds their records to *records and
 * returns the end of what it wrote, or out when it wrote no run; seal a
 * run with trace_run_seal().
 */
uint8_t *trace_run_pack(trace_packer *p, const trace_sites *sites,
                        const trace_entry **e, const trace_entry *end,
                        uint8_t *out, const uint8_t *limit,
                        uint32_t max_records, uint32_t *records);

/* Which entries are kept, by address: those in [lo[i], lo[i] + len[i])
 * when keep[i] is set (none there when it is clear), for either of two
 * spans (a loop between a heap block and its stack goes from one to the
 * other at every entry), else as more() answers, which makes the span of
 * addr span 0 and span 0 span 1 (the recorder's default run keeps heap
 * and static memory: spans of heap arenas, modules' data, stacks).  A
 * span that answers is not moved: nothing is stored but on a miss. */
typedef struct trace_keep {
    uint64_t lo[2], len[2];
    int keep[2];
    int (*more)(struct trace_keep *k, uint64_t addr);
    void *arg;             /* more()'s */
} trace_keep;

static inline int trace_keep_test(trace_keep *k, uint64_t addr)
{
    if (addr - k->lo[0] < k->len[0])
        return k->keep[0];
    if (addr - k->lo[1] < k->len[1])
        return k->keep[1];
    return k->more(k, addr);
}

/* trace_run_pack, of the entries keep keeps only (the others are passed,
 * as entries of unknown sites are): packing and filtering in one pass. */
uint8_t *trace_run_pack_kept(trace_packer *p, const trace_sites *sites,
                             const trace_entry **e, const trace_entry *end,
                             uint8_t *out, const uint8_t *limit,
                             uint32_t max_records, uint32_t *records,
                             trace_keep *keep);

/* Completes the run packed at run: its records take sequence numbers
 * from first_seq on. */
void trace_run_seal(trace_packer *p, uint8_t *run, uint64_t first_seq,
                    uint32_t records);

/* Packs n records into out (at least n * TRACE_PACKED_MAX bytes) as a
 * chunk of their own; returns the packed length. */
size_t trace_events_pack(const memtap_record *r, size_t n, uint8_t *out);

/* Unpacks exactly n records from the chunk in[0..len), access runs
 * expanded through sites (NULL: a run is an error), with pk (see
 * trace_packer_reset), kept from chunk to chunk: clearing what a chunk set
 * costs less than clearing all of it; 0, or -1 when the bytes are not n
 * well-formed records.  *ordered (when not NULL) says whether their
 * sequence numbers rise from each record to the next. */
int trace_events_unpack(trace_packer *pk, const uint8_t *in, size_t len,
                        memtap_record *out, size_t n,
                        const trace_sites *sites, int *ordered);

#endif
