/*
 * rewrite/stubs.c - stubs for jumps whose rel32 carries fixed bytes
 * (rewrite/stubs.h): the places a constraint allows are enumerated in
 * address order (the free bytes of the displacement counted up), each
 * constraint remembers where its last stub went (sites come down in
 * address order, so the next stub goes at or after it while the site's
 * reach allows), places outside the space (between holes, below the
 * floor) are stepped over, and a bitmap per page says which bytes stubs
 * took.  No stub crosses a page's end: each page is written whole.
 */
#include "rewrite/stubs.h"
#include "sys/page.h"

#include <stdlib.h>
#include <string.h>

#define TRIES 4096            /* taken places skipped before giving up */

struct stub_page {
    uint64_t page;            /* link-time address, 0: an empty slot */
    uint64_t used[PAGE / 64]; /* a bit per byte a stub takes */
};

struct stub_hint {
    uint32_t mask, value;
    uint64_t next;            /* after the last stub of this constraint */
};

void stub_space_init(stub_space *s, uint64_t floor, const stub_hole *holes,
                     size_t nholes)
{
    memset(s, 0, sizeof *s);
    s->floor = s->top = floor;
    s->holes = holes;
    s->nholes = nholes;
    s->stubs.elem = sizeof(stub);
}

void stub_space_free(stub_space *s)
{
    free(s->pages);
    free(s->hints);
    free(s->stubs.v);
    memset(s, 0, sizeof *s);
}

static size_t page_slot(const stub_space *s, uint64_t page)
{
    size_t i = (size_t)((page >> PAGE_SHIFT) * 0x9e3779b97f4a7c15ull >> 20);
    for (i &= s->pages_cap - 1; s->pages[i].page && s->pages[i].page != page;
         i = (i + 1) & (s->pages_cap - 1)) {
    }
    return i;
}

static struct stub_page *page_of(stub_space *s, uint64_t page, int make)
{
    if (s->pages_cap) {
        struct stub_page *p = &s->pages[page_slot(s, page)];
        if (p->page || !make)
            return p->page ? p : NULL;
    } else if (!make) {
        return NULL;
    }
    if (2 * (s->npages + 1) > s->pages_cap) {
        stub_space grown = *s;
        grown.pages_cap = s->pages_cap ? 2 * s->pages_cap : 64;
        grown.pages = calloc(grown.pages_cap, sizeof *grown.pages);
        if (!grown.pages)
            return NULL;
        for (size_t i = 0; i < s->pages_cap; i++)
            if (s->pages[i].page)
                grown.pages[page_slot(&grown, s->pages[i].page)] = s->pages[i];
        free(s->pages);
        s->pages = grown.pages;
        s->pages_cap = grown.pages_cap;
    }
    struct stub_page *p = &s->pages[page_slot(s, page)];
    p->page = page;
    s->npages++;
    return p;
}

static int byte_used(stub_space *s, uint64_t a)
{
    struct stub_page *p = page_of(s, page_start(a), 0);
    uint64_t o = a & (PAGE - 1);
    return p && (p->used[o / 64] >> (o % 64) & 1);
}

/* The first byte at or after a that no stub took. */
static uint64_t next_free(stub_space *s, uint64_t a)
{
    for (;;) {
        struct stub_page *p = page_of(s, page_start(a), 0);
        if (!p)
            return a;
        for (uint64_t o = a & (PAGE - 1); o < PAGE;) {
            uint64_t free = ~p->used[o / 64] >> (o % 64);
            if (free)
                return page_start(a) + o + (uint64_t)__builtin_ctzll(free);
            o = (o | 63) + 1;
        }
        a = page_start(a) + PAGE;
    }
}

static int take_bytes(stub_space *s, uint64_t at)
{
    for (uint64_t a = at; a < at + STUB_LEN; a++) {
        struct stub_page *p = page_of(s, page_start(a), 1);
        if (!p)
            return -1;
        uint64_t o = a & (PAGE - 1);
        p->used[o / 64] |= 1ull << (o % 64);
    }
    return 0;
}

static struct stub_hint *hint_of(stub_space *s, uint32_t mask, uint32_t value)
{
    for (size_t i = 0; i < s->nhints; i++)
        if (s->hints[i].mask == mask && s->hints[i].value == value)
            return &s->hints[i];
    struct stub_hint *h = array_push((void **)&s->hints, &s->nhints,
                                     &s->hints_cap, sizeof *h);
    if (h) {
        h->mask = mask;
        h->value = value;
    }
    return h;
}

/* The least x >= r with (x & mask) == value among 32-bit values, in *x;
 * -1 when there is none.  The constraint fixes whole bytes (mask's bytes
 * are 0x00 or 0xff): the highest fixed byte that differs is raised to
 * its value (the bytes below it then as low as allowed), or, when above
 * it, the bytes above it carry one. */
static int next_allowed(uint64_t r, uint32_t mask, uint32_t value, uint64_t *x)
{
    uint64_t c = r;
    for (int carries = 0; carries < 8 && c <= UINT32_MAX; carries++) {
        int i = 3;
        while (i >= 0 && !((mask >> (8 * i) & 0xff) && ((c ^ value) >> (8 * i) & 0xff)))
            i--;
        if (i < 0) {
            *x = c;
            return 0;
        }
        uint64_t m = 0xffull << (8 * i), below = (1ull << (8 * i)) - 1;
        if ((c & m) < (value & m)) {
            *x = (c & ~(m | below)) | (value & m) | (value & mask & below);
            return 0;
        }
        c = (c | m | below) + 1;
    }
    return -1;
}

/* The first address from t on where a stub may lie whole: t itself, the
 * start of the next hole, or the floor. */
static uint64_t in_space(const stub_space *s, uint64_t t)
{
    if (t >= s->floor)
        return t;
    size_t lo = 0, hi = s->nholes; /* the first hole ending past t */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->holes[mid].hi <= t + STUB_LEN - 1)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == s->nholes)
        return s->floor;
    return t >= s->holes[lo].lo ? t : s->holes[lo].lo;
}

/* The first free place for a stub from displacement r on, among those
 * the constraint allows in the space: *at, 0; -1 when there is none
 * before the end of the reach (or TRIES places were taken). */
static int first_free(stub_space *s, uint64_t base, uint64_t r, uint32_t mask,
                      uint32_t value, uint64_t to, uint64_t *at)
{
    for (int tries = 0; tries < TRIES; tries++) {
        uint64_t x;
        if (next_allowed(r, mask, value, &x) != 0 || x > INT32_MAX)
            return -1;
        uint64_t t = base + x, from = in_space(s, t);
        if (from != t) { /* between holes: on from the next one */
            r = from - base;
            continue;
        }
        int64_t back = (int64_t)(to - (t + STUB_LEN)); /* the stub's jump */
        if (back < INT32_MIN || back > INT32_MAX)
            return -1;
        uint64_t used = 0; /* the first byte a stub took there */
        for (uint64_t a = t; a < t + STUB_LEN && !used; a++)
            used = byte_used(s, a) ? a : 0;
        if (!used && page_start(t) == page_start(t + STUB_LEN - 1)) {
            *at = t;
            return 0;
        }
        /* past the stubs there (a run of them: a bitmap's words at a
         * time), or into the next page */
        r = (used ? next_free(s, used) : page_start(t) + PAGE) - base;
    }
    return -1;
}

int stub_take(stub_space *s, uint64_t from, uint32_t mask, uint32_t value,
              uint64_t to, uint64_t *at)
{
    uint64_t base = from + STUB_LEN;
    value &= mask;
    struct stub_hint *h = hint_of(s, mask, value);
    if (!h)
        return -1;
    /* from the constraint's last stub on while this site reaches there
     * (sites come down in address: the places below it were taken, which
     * a constraint with few places, one byte in 256, would otherwise walk
     * past one by one), else from the lowest */
    uint64_t t;
    int found = h->next > base &&
                first_free(s, base, h->next - base, mask, value, to, &t) == 0;
    if (!found &&
        first_free(s, base, in_space(s, base) - base, mask, value, to, &t) != 0)
        return -1;
    stub *st = vec_push(&s->stubs);
    if (!st || take_bytes(s, t) != 0)
        return -1;
    st->at = t;
    st->to = to;
    h->next = t + STUB_LEN;
    if (t + STUB_LEN > s->top)
        s->top = t + STUB_LEN;
    *at = t;
    return 0;
}

static int by_address(const void *a, const void *b)
{
    uint64_t x = ((const stub *)a)->at, y = ((const stub *)b)->at;
    return x < y ? -1 : x > y;
}

int stub_pages(stub_space *s,
               int (*each)(uint64_t page, const uint8_t *bytes, void *arg),
               void *arg)
{
    stub *v = s->stubs.v;
    size_t n = s->stubs.n;
    if (n)
        qsort(v, n, sizeof *v, by_address);
    uint8_t *buf = malloc(PAGE);
    if (!buf)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < n && !rc;) {
        uint64_t page = page_start(v[i].at);
        memset(buf, 0xcc, PAGE);
        for (; i < n && page_start(v[i].at) == page; i++) {
            uint8_t *o = buf + (v[i].at - page);
            int32_t rel = (int32_t)(int64_t)(v[i].to - (v[i].at + STUB_LEN));
            o[0] = 0xe9;
            memcpy(o + 1, &rel, 4);
        }
        rc = each(page, buf, arg);
    }
    free(buf);
    return rc;
}
