/*
 * pack.c - packing and unpacking the records and access runs of event
 * chunks (pack.h), and the records an entry stands for (its followers',
 * those due later).  Safe inside traced processes: no allocation, no
 * stdio.
 *
 * One file: unpacking a run expands each entry in its loop, inlined, and
 * packing one ends where expanding finds no record still due.
 */
#include "pack.h"
#include "trace/format.h"

#include <string.h>

enum {
    HAS_FLAGS = 1u << 0,
    HAS_ADDR2 = 1u << 1,
    HAS_AUX = 1u << 2,
    HAS_COUNT = 1u << 3,
    HAS_RESERVED = 1u << 4,
};

static uint8_t *put(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

/* put() of 2^21 <= v < 2^28, four bytes, without put()'s loop (whose
 * exit a random address mispredicts) */
static inline uint8_t *put4(uint8_t *p, uint32_t v)
{
    uint32_t w = (v & 0x7f) | (v << 1 & 0x7f00) | (v << 2 & 0x7f0000) |
                 (v << 3 & 0x7f000000) | 0x808080u;
    memcpy(p, &w, 4);
    return p + 4;
}

static uint64_t zigzag(uint64_t delta)
{
    return (delta << 1) ^ (uint64_t)((int64_t)delta >> 63);
}

static uint64_t unzigzag(uint64_t z)
{
    return (z >> 1) ^ (uint64_t)-(int64_t)(z & 1);
}

void trace_packer_init(trace_packer *p)
{
    memset(p, 0, sizeof *p);
}

void trace_packer_reset(trace_packer *p)
{
    if (p->ntouched > TRACE_TOUCHED_MAX) {
        trace_packer_init(p);
        return;
    }
    /* every site's first entry in a chunk is one whose site was not the
     * guess, which notes its slot (trace_run_pack), but for site 0, whose
     * slot is 0, as is the slot of the site before the chunk's first */
    for (uint32_t i = 0; i < p->ntouched; i++) {
        p->slots[p->touched[i]] = 0;
        p->next[p->touched[i]] = 0;
    }
    p->slots[0] = 0;
    p->next[0] = 0;
    p->ntouched = 0;
    memset(&p->prev, 0, sizeof p->prev);
    p->prev_site = 0;
}

/* Notes that slot is set (trace_packer_reset clears it). */
static inline void touch(trace_packer *p, uint32_t slot)
{
    if (p->ntouched < TRACE_TOUCHED_MAX)
        p->touched[p->ntouched] = (uint16_t)slot;
    if (p->ntouched <= TRACE_TOUCHED_MAX)
        p->ntouched++;
}

uint8_t *trace_pack_record(trace_packer *p, const memtap_record *x,
                           uint8_t *out)
{
    uint8_t *o = out;
    uint8_t has = (uint8_t)((x->flags ? HAS_FLAGS : 0) |
                            (x->addr2 ? HAS_ADDR2 : 0) |
                            (x->aux ? HAS_AUX : 0) |
                            (x->count != 1 ? HAS_COUNT : 0) |
                            (x->reserved ? HAS_RESERVED : 0));
    *o++ = x->kind;
    *o++ = has;
    o = put(o, zigzag(x->seq - p->prev.seq));
    o = put(o, zigzag(x->pc - p->prev.pc));
    o = put(o, zigzag(x->addr - p->prev.addr));
    o = put(o, x->size);
    if (has & HAS_FLAGS)
        *o++ = x->flags;
    if (has & HAS_ADDR2)
        o = put(o, zigzag(x->addr2 - x->addr));
    if (has & HAS_AUX)
        o = put(o, zigzag(x->aux - p->prev.aux));
    if (has & HAS_COUNT)
        o = put(o, x->count);
    if (has & HAS_RESERVED)
        o = put(o, x->reserved);
    p->prev.seq = x->seq;
    p->prev.pc = x->pc;
    p->prev.addr = x->addr;
    p->prev.aux = x->aux;
    return o;
}

void trace_site_records_fill(const trace_sites *s, uint32_t tag,
                             uint8_t *records)
{
    const trace_site_table *tab;
    uint32_t index;
    for (uint32_t i = 0; i < s->tabs[tag].nsites; i++)
        records[i] = (uint8_t)trace_site_records(
            s, tag << MEMTAP_SITE_BITS | i, &tab, &index);
}

/* The predictors' slot of site, of the first 2^bits slots (trace.h). */
static inline uint32_t site_slot(uint32_t site, unsigned bits)
{
    return (site * 0x9E3779B1u) >> (32 - bits);
}

/* The records an entry naming `site` stands for (trace_site_records),
 * from the table's records bytes when it has them. */
static inline uint32_t site_records(const trace_sites *s, uint32_t site,
                                    const trace_site_table **tab,
                                    uint32_t *index)
{
    uint32_t tag = site >> MEMTAP_SITE_BITS;
    uint32_t i = site & ((1u << MEMTAP_SITE_BITS) - 1);
    if (s && tag < s->ntabs && s->tabs[tag].records) {
        *tab = &s->tabs[tag];
        *index = i;
        return i < s->tabs[tag].nsites ? s->tabs[tag].records[i] : 0;
    }
    return trace_site_records(s, site, tab, index);
}

/* The sites of one module whose records bytes the packer has at hand:
 * site base + i stands for records[i] records, i < n (most entries in a
 * row name sites of one module). */
typedef struct site_window {
    uint32_t base, n;
    const uint8_t *records;
} site_window;

/* The window of site's module; empty when its table has no records bytes
 * (site_records() then answers for each entry). */
static inline site_window window_of(const trace_sites *s, uint32_t site)
{
    uint32_t tag = site >> MEMTAP_SITE_BITS;
    if (s && tag < s->ntabs && s->tabs[tag].records)
        return (site_window){ tag << MEMTAP_SITE_BITS, s->tabs[tag].nsites,
                              s->tabs[tag].records };
    return (site_window){ 0, 0, NULL };
}

/* The records of a site outside every window: its table has no records
 * bytes, or it names no site of its table (0). */
__attribute__((noinline)) static uint32_t records_of(const trace_sites *s,
                                                     uint32_t site)
{
    const trace_site_table *tab;
    uint32_t index;
    return trace_site_records(s, site, &tab, &index);
}

/* The state of packing a run (trace_run_pack), in locals: the bytes
 * written may alias anything. */
typedef struct run_state {
    const trace_entry *x;
    uint8_t *o;
    uint32_t prev_site, prev_slot, skipped, budget;
    site_window w;
} run_state;

/* Packs entries from s.x on, up to `to`, while the bytes stay below stop
 * and the records within the budget; returns the state after.  Inlined
 * into both of trace_run_pack's calls, the state passed by value. */
static inline __attribute__((always_inline)) run_state
pack_entries(trace_packer *p, const trace_sites *tabs, run_state s,
             const trace_entry *to, const uint8_t *stop, trace_keep *keep)
{
    const trace_entry *x = s.x;
    uint8_t *o = s.o;
    uint32_t prev_site = s.prev_site, prev_slot = s.prev_slot;
    uint32_t skipped = s.skipped, budget = s.budget;
    site_window w = s.w;
    /* keep in a local, written back: the bytes written may alias it */
    trace_keep spans = { { 0, 0 }, { 0, 0 }, { 1, 1 }, NULL, NULL };
    if (keep)
        spans = *keep;
    for (; x < to && o <= stop; x++) {
        uint32_t site = x->site;
        uint64_t addr = x->addr;
        if (keep && !trace_keep_test(&spans, addr)) {
            skipped++;
            continue;
        }
        uint32_t k, i = site - w.base;
        if (__builtin_expect(i < w.n, 1)) {
            k = w.records[i];
        } else {
            w = window_of(tabs, site);
            i = site - w.base;
            k = i < w.n ? w.records[i] : records_of(tabs, site);
        }
        if (k > budget)
            break;
        if (!k) {
            skipped++;
            continue;
        }
        budget -= k;
        uint32_t guess = p->next[prev_slot];
        p->next[prev_slot] = site;
        prev_site = site;
        prev_slot = site_slot(site, TRACE_SITE_SLOT_BITS);
        uint64_t daddr = zigzag(addr - p->slots[prev_slot]);
        p->slots[prev_slot] = addr;
        /* the usual, the site guessed and a small delta: one byte (or
         * two) */
        if ((daddr | (uint64_t)(site ^ guess) << 32) < 0x40) {
            *o++ = (uint8_t)(daddr << 1 | 1);
        } else if ((daddr | (uint64_t)(site ^ guess) << 32) < 0x2000) {
            o[0] = (uint8_t)(daddr << 1 | 0x81);
            o[1] = (uint8_t)(daddr >> 6);
            o += 2;
        } else if (site == guess && daddr >> 20 && daddr < 1u << 27) {
            o = put4(o, (uint32_t)daddr << 1 | 1);
        } else if (site == guess && daddr >> 63 == 0) {
            o = put(o, daddr << 1 | 1);
        } else {
            /* a site's first entry in the chunk comes here (it followed
             * no site yet): note its slot when it was clear */
            if (unzigzag(daddr) == addr)
                touch(p, prev_slot);
            uint32_t dsite = site - guess;
            o = put(put(o, zigzag((uint64_t)(int64_t)(int32_t)dsite) << 1),
                    daddr);
        }
    }
    if (keep)
        *keep = spans;
    return (run_state){ x, o, prev_site, prev_slot, skipped, budget, w };
}

/* How many entries from `from` of entries[0..) (to at most n) a run
 * packing them must take on for no follower's records to be due. */
static size_t to_close(const trace_sites *s, const trace_entry *e,
                       size_t from, size_t n)
{
    size_t more = 0;
    while (from + more < n && more < TRACE_WINDOW_ENTRIES &&
           trace_window_start(s, e, from + more) < from + more)
        more++;
    return more;
}

/* trace_run_pack_kept; inlined into both, keep a constant NULL in one. */
static inline __attribute__((always_inline)) uint8_t *
run_pack(trace_packer *p, const trace_sites *sites, const trace_entry **e,
         const trace_entry *end, uint8_t *out, const uint8_t *limit,
         uint32_t max_records, uint32_t *records, trace_keep *keep)
{
    const trace_entry *first = *e;
    const trace_sites tabs = *sites;
    run_state s = { first, out + TRACE_RUN_FRAME, /* mark, u32, u64 seq */
                    p->prev_site, site_slot(p->prev_site, TRACE_SITE_SLOT_BITS),
                    0, max_records, { 0, 0, NULL } };
    const uint8_t *stop = limit - TRACE_ENTRY_MAX;
    s = pack_entries(p, &tabs, s, end, stop, keep);
    size_t more = s.x < end ? to_close(&tabs, first, (size_t)(s.x - first),
                                       (size_t)(end - first))
                            : 0;
    if (more) { /* on past the limits (trace.h) */
        s.budget += TRACE_RUN_OVER_RECORDS;
        max_records += TRACE_RUN_OVER_RECORDS;
        s = pack_entries(p, &tabs, s, s.x + more,
                         stop + TRACE_RUN_OVER_BYTES, keep);
    }
    *e = s.x;
    p->prev_site = s.prev_site;
    uint32_t entries = (uint32_t)(s.x - first) - s.skipped;
    if (!entries)
        return out;
    out[0] = MEMTAP_RUN_MARK_WIDE;
    memcpy(out + 1, &entries, 4);
    *records += max_records - s.budget;
    return s.o;
}

uint8_t *trace_run_pack(trace_packer *p, const trace_sites *sites,
                        const trace_entry **e, const trace_entry *end,
                        uint8_t *out, const uint8_t *limit,
                        uint32_t max_records, uint32_t *records)
{
    return run_pack(p, sites, e, end, out, limit, max_records, records, NULL);
}

uint8_t *trace_run_pack_kept(trace_packer *p, const trace_sites *sites,
                             const trace_entry **e, const trace_entry *end,
                             uint8_t *out, const uint8_t *limit,
                             uint32_t max_records, uint32_t *records,
                             trace_keep *keep)
{
    return run_pack(p, sites, e, end, out, limit, max_records, records, keep);
}

void trace_run_seal(trace_packer *p, uint8_t *run, uint64_t first_seq,
                    uint32_t records)
{
    memcpy(run + 5, &first_seq, 8);
    p->prev.seq = first_seq + records - 1;
}

size_t trace_events_pack(const memtap_record *r, size_t n, uint8_t *out)
{
    trace_packer p;
    trace_packer_init(&p);
    uint8_t *o = out;
    for (size_t i = 0; i < n; i++)
        o = trace_pack_record(&p, &r[i], o);
    return (size_t)(o - out);
}

/* Reads a varint of at most 10 bytes; NULL past the end or when longer. */
static const uint8_t *get(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
    uint64_t x = 0;
    for (unsigned shift = 0; p < end && shift < 70; shift += 7) {
        uint8_t b = *p++;
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return p;
        }
    }
    return NULL;
}

/* get() with the one-byte varint, the usual site delta, inline. */
static inline const uint8_t *get_short(const uint8_t *p, const uint8_t *end,
                                       uint64_t *v)
{
    if (p < end && *p < 0x80) {
        *v = *p;
        return p + 1;
    }
    return get(p, end, v);
}

/* Unpacks one record after its kind byte; NULL when malformed. */
static const uint8_t *unpack_record(trace_packer *pk, uint8_t kind,
                                    const uint8_t *p, const uint8_t *end,
                                    memtap_record *out)
{
    memtap_record x;
    memset(&x, 0, sizeof x);
    uint64_t v[4];
    if (p == end)
        return NULL;
    x.kind = kind;
    uint8_t has = *p++;
    for (int k = 0; k < 4 && p; k++)
        p = get(p, end, &v[k]);
    if (!p || (has & ~0x1fu))
        return NULL;
    x.seq = pk->prev.seq + unzigzag(v[0]);
    x.pc = pk->prev.pc + unzigzag(v[1]);
    x.addr = pk->prev.addr + unzigzag(v[2]);
    x.size = v[3];
    x.count = 1;
    uint64_t w = 0;
    if (has & HAS_FLAGS) {
        if (p == end)
            return NULL;
        x.flags = *p++;
    }
    if ((has & HAS_ADDR2) && (p = get(p, end, &w)) != NULL)
        x.addr2 = x.addr + unzigzag(w);
    if (p && (has & HAS_AUX) && (p = get(p, end, &w)) != NULL)
        x.aux = pk->prev.aux + unzigzag(w);
    if (p && (has & HAS_COUNT) && (p = get(p, end, &w)) != NULL)
        x.count = (uint32_t)w;
    if (p && (has & HAS_RESERVED) && (p = get(p, end, &w)) != NULL)
        x.reserved = (uint16_t)w;
    if (p) {
        *out = x;
        pk->prev.seq = x.seq;
        pk->prev.pc = x.pc;
        pk->prev.addr = x.addr;
        pk->prev.aux = x.aux;
    }
    return p;
}

/* Whether an entry naming site index of module tag lies outside the
 * stretch of a follower whose leader is site lo and due site due, both
 * of module dtag (trace.h): the records it holds come before that
 * entry's. */
static inline int outside_stretch(uint32_t tag, uint32_t index,
                                  uint32_t dtag, uint32_t lo, uint32_t due)
{
    return tag != dtag || index <= lo || index > due;
}

/* Moves records held in d to out (numbered from seq on), in their order:
 * with `due` clear, those an entry naming site (tag, index) lies outside
 * the stretch of (all, for an index of 0 and tag UINT32_MAX), else those
 * due at it.  Returns how many. */
static size_t deferred_take(trace_deferred *d, uint32_t tag, uint32_t index,
                            int due, memtap_record *out, uint64_t seq)
{
    uint32_t kept = 0;
    size_t n = 0;
    for (uint32_t k = 0; k < d->n; k++) {
        const trace_due *a = &d->at[k];
        int go = due ? a->tag == tag && a->due == index
                     : outside_stretch(tag, index, a->tag, a->lo, a->due);
        if (go) {
            out[n] = d->r[k];
            out[n].seq = seq + n;
            n++;
        } else {
            d->at[kept] = *a;
            d->r[kept++] = d->r[k];
        }
    }
    d->n = kept;
    return n;
}

/* Writes the records of site y (its load, its store, or both) at addr
 * into out, numbered from seq on; returns how many. */
static inline size_t put_site(const memtap_site *y, uint64_t bias,
                              uint64_t addr, uint64_t seq, memtap_record *out)
{
    memtap_record r = { .seq = seq, .pc = bias + y->pc, .addr = addr,
                        .size = y->size, .count = y->count,
                        .kind = MEMTAP_EV_LOAD };
    size_t n = 0;
    if (y->read)
        out[n++] = r;
    if (y->write) {
        r.seq = seq + n;
        r.kind = MEMTAP_EV_STORE;
        out[n++] = r;
    }
    return n;
}

/* The records of the site at index of tab (known valid, of module tag) at
 * addr, its followers' included, with sequence numbers from seq on; those
 * of followers due later go to d (or here, when d is full: a corrupt
 * table), numbered when taken. */
static inline __attribute__((always_inline)) size_t
expand_site(const trace_site_table *tab, uint32_t tag, uint32_t index,
            uint64_t addr, uint64_t seq, memtap_record *out,
            trace_deferred *d)
{
    const memtap_site *x = &tab->sites[index];
    size_t n = put_site(x, tab->bias, addr, seq, out);
    for (uint32_t f = 1; f <= x->followers; f++) {
        const memtap_site *y = &x[f];
        uint64_t at = addr + (uint64_t)(int64_t)y->delta;
        uint32_t k = (uint32_t)(y->read != 0) + (y->write != 0);
        if (y->due && d->n + k <= MEMTAP_DEFERRED_MAX) {
            put_site(y, tab->bias, at, 0, &d->r[d->n]);
            for (; k; k--)
                d->at[d->n++] = (trace_due){ tag, index, index + y->due };
        } else {
            n += put_site(y, tab->bias, at, seq + n, out + n);
        }
    }
    return n;
}

size_t trace_entry_expand(const trace_sites *s, trace_deferred *d,
                          const trace_entry *e, memtap_record *out)
{
    const trace_site_table *tab;
    uint32_t index, tag = e->site >> MEMTAP_SITE_BITS;
    if (!trace_site_records(s, e->site, &tab, &index))
        return 0;
    size_t n = d->n ? deferred_take(d, tag, index, 0, out, 0) : 0;
    n += expand_site(tab, tag, index, e->addr, n, out + n, d);
    if (d->n)
        n += deferred_take(d, tag, index, 1, out + n, n);
    return n;
}

size_t trace_deferred_flush(trace_deferred *d, memtap_record *out)
{
    return deferred_take(d, UINT32_MAX, 0, 0, out, 0);
}

/* Whether the follower y of the site at index of module tag, entries[j],
 * is still due after the entries after it up to n. */
static int still_due(const trace_sites *s, const trace_entry *e, size_t j,
                     size_t n, uint32_t tag, uint32_t index,
                     const memtap_site *y)
{
    uint32_t due = index + y->due;
    for (size_t k = j + 1; k < n; k++) {
        const trace_site_table *tab;
        uint32_t at;
        if (!trace_site_records(s, e[k].site, &tab, &at))
            continue; /* packed by no one */
        if (at == due ||
            outside_stretch(e[k].site >> MEMTAP_SITE_BITS, at, tag, index, due))
            return 0; /* its due site, or outside its stretch */
    }
    return 1;
}

/* The first of the last TRACE_WINDOW_ENTRIES of entries e[0..n) after
 * which a follower's records are still due at n, or n. */
static size_t first_open(const trace_sites *s, const trace_entry *e,
                         size_t n)
{
    for (size_t j = n > TRACE_WINDOW_ENTRIES ? n - TRACE_WINDOW_ENTRIES : 0;
         j < n; j++) {
        const trace_site_table *tab;
        uint32_t index;
        if (!trace_site_records(s, e[j].site, &tab, &index))
            continue;
        const memtap_site *x = &tab->sites[index];
        for (uint32_t f = 1; f <= x->followers; f++)
            /* one due at a site of its own group comes before whatever
             * entry is next: at the end of a run too */
            if (x[f].due > x->followers && still_due(s, e, j, n,
                                      e[j].site >> MEMTAP_SITE_BITS, index,
                                      &x[f]))
                return j;
    }
    return n;
}

size_t trace_window_start(const trace_sites *s, const trace_entry *e,
                          size_t n)
{
    /* a cut before an entry leaves records due there still due; memtap
     * instrument leaves a place to cut in every TRACE_WINDOW_ENTRIES */
    size_t least = n > TRACE_WINDOW_ENTRIES ? n - TRACE_WINDOW_ENTRIES : 0;
    for (size_t cut = first_open(s, e, n); cut < n; cut = first_open(s, e, n))
        n = cut;
    return n > least ? n : least;
}

/* The forms of access runs (trace.h): which predicts the site, and how
 * many slots the predictors have. */
typedef struct run_form {
    int next;       /* the site that followed (formats 4, 5), else the
                       site before (format 3) */
    unsigned bits;  /* of the slots */
} run_form;

/* Reads the site and address delta of one entry of a run (trace.h).  NULL
 * when malformed. */
static inline const uint8_t *get_entry(trace_packer *pk, run_form form,
                                       const uint8_t *p, const uint8_t *end,
                                       uint32_t *site, uint64_t *daddr)
{
    uint64_t h;
    if (!(p = get_short(p, end, &h)))
        return NULL;
    if (!form.next) {
        *site = pk->prev_site + (uint32_t)unzigzag(h);
        return get_short(p, end, daddr);
    }
    uint32_t *next = &pk->next[site_slot(pk->prev_site, form.bits)];
    if (h & 1) {
        *daddr = h >> 1;
    } else {
        *next += (uint32_t)unzigzag(h >> 1);
        p = get_short(p, end, daddr);
    }
    *site = *next;
    return p;
}

/* Expands one access run (after its mark) into out[*i..n); NULL when
 * malformed.  A run of format 3 has its sequence number last.  Inlined
 * into each call, whose form is a constant. */
static inline __attribute__((always_inline)) const uint8_t *
unpack_run(trace_packer *pk, const trace_sites *sites, run_form form,
           const uint8_t *p, const uint8_t *end, memtap_record *out,
           size_t *i, size_t n, trace_deferred *d)
{
    uint32_t entries;
    uint64_t seq = 0;
    if (end - p < (form.next ? 12 : 4))
        return NULL;
    memcpy(&entries, p, 4);
    p += 4;
    if (form.next) {
        memcpy(&seq, p, 8);
        p += 8;
    }
    size_t first = *i;
    uint32_t held = d->n; /* d's records, in a register */
    for (uint32_t k = 0; k < entries; k++) {
        uint32_t site, index;
        uint64_t daddr;
        if (!(p = get_entry(pk, form, p, end, &site, &daddr)))
            return NULL;
        const trace_site_table *tab;
        uint32_t records = site_records(sites, site, &tab, &index);
        if (!records || n - *i < records + held)
            return NULL;
        pk->prev_site = site;
        uint32_t at = site_slot(site, form.bits);
        uint64_t *slot = &pk->slots[at];
        if (__builtin_expect(!*slot, 0)) /* for trace_packer_reset */
            touch(pk, at);
        *slot += unzigzag(daddr);
        uint32_t tag = site >> MEMTAP_SITE_BITS;
        const memtap_site *x = &tab->sites[index];
        if (__builtin_expect(held != 0, 0))
            *i += deferred_take(d, tag, index, 0, &out[*i], seq + (*i - first));
        if (!x->followers) { /* most entries */
            *i += put_site(x, tab->bias, *slot, seq + (*i - first), &out[*i]);
        } else {
            *i += expand_site(tab, tag, index, *slot, seq + (*i - first),
                              &out[*i], d);
            held = d->n;
        }
        if (__builtin_expect(held != 0, 0)) {
            *i += deferred_take(d, tag, index, 1, &out[*i], seq + (*i - first));
            held = d->n;
        }
    }
    if (!entries)
        return NULL;
    if (d->n) /* a run cut short (by a signal, say) */
        *i += deferred_take(d, UINT32_MAX, 0, 0, &out[*i], seq + (*i - first));
    if (!form.next) {
        uint64_t dseq;
        if (!(p = get(p, end, &dseq)))
            return NULL;
        seq = pk->prev.seq + unzigzag(dseq);
        for (size_t k = first; k < *i; k++)
            out[k].seq += seq;
    }
    pk->prev.seq = seq + (*i - first) - 1;
    return p;
}

int trace_events_unpack(trace_packer *pk, const uint8_t *in, size_t len,
                        memtap_record *out, size_t n,
                        const trace_sites *sites, int *ordered)
{
    static const run_form first_form = { 0, TRACE_SITE_SLOT_BITS_4 },
                          next_form = { 1, TRACE_SITE_SLOT_BITS_4 },
                          wide_form = { 1, TRACE_SITE_SLOT_BITS };
    const uint8_t *p = in, *end = in + len;
    trace_packer_reset(pk);
    trace_deferred d;
    d.n = 0;
    size_t i = 0;
    int rising = 1; /* a run's numbers rise unless they wrap around */
    while (i < n && p && p < end) {
        uint8_t kind = *p++;
        size_t first = i;
        if (kind == MEMTAP_RUN_MARK_WIDE)
            p = unpack_run(pk, sites, wide_form, p, end, out, &i, n, &d);
        else if (kind == MEMTAP_RUN_MARK_NEXT)
            p = unpack_run(pk, sites, next_form, p, end, out, &i, n, &d);
        else if (kind == MEMTAP_RUN_MARK)
            p = unpack_run(pk, sites, first_form, p, end, out, &i, n, &d);
        else
            p = unpack_record(pk, kind, p, end, &out[i++]);
        if (p && ((first && out[first].seq <= out[first - 1].seq) ||
                  out[i - 1].seq < out[first].seq))
            rising = 0;
    }
    if (ordered)
        *ordered = rising;
    return p == end && i == n ? 0 : -1;
}

