/*
 * test_go_functab.c - the function starts go_functab_each reads from
 * .gopclntab headers built here by hand, one per layout (Go 1.2's 64-bit
 * pcs, Go 1.16's table offset, Go 1.18+'s 32-bit offsets from textStart),
 * and the tables it must refuse: an unknown magic, 4-byte pointers, a
 * count past the section's end, entries out of order.
 */
#include "check.h"
#include "analysis/go_functab.h"

#include <stdint.h>

typedef struct seen {
    int n;
    uint64_t start[8], size[8];
    int stop_at;                /* return non-zero at this call (1-based) */
} seen;

static int note(void *arg, uint64_t start, uint64_t size)
{
    seen *s = arg;
    if (s->n < 8) {
        s->start[s->n] = start;
        s->size[s->n] = size;
    }
    s->n++;
    return s->n == s->stop_at ? 42 : 0;
}

static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, sizeof v); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, sizeof v); }

/* A header: magic, pad, pad, minLC 1, ptrSize 8, nfunc. */
static void header(uint8_t *d, uint32_t magic, uint64_t nfunc)
{
    put32(d, magic);
    d[4] = d[5] = 0;
    d[6] = 1;
    d[7] = 8;
    put64(d + 8, nfunc);
}

static void test_go118(void)
{
    /* three functions from textStart 0x401000: at +0, +0x40, +0x40 (an
     * empty one, skipped), +0x100; the end at +0x180 */
    uint8_t d[256] = { 0 };
    header(d, 0xfffffff1u, 4);
    put64(d + 24, 0x401000);
    put64(d + 64, 96);
    uint32_t offs[] = { 0, 0x40, 0x40, 0x100, 0x180 };
    for (int i = 0; i < 5; i++)
        put32(d + 96 + 8 * i, offs[i]);
    seen s = { 0 };
    CHECK_EQ_U64(go_functab_each(d, sizeof d, note, &s), 0);
    CHECK_EQ_U64(s.n, 3);
    CHECK_EQ_U64(s.start[0], 0x401000);
    CHECK_EQ_U64(s.size[0], 0x40);
    CHECK_EQ_U64(s.start[1], 0x401040);
    CHECK_EQ_U64(s.size[1], 0xc0);
    CHECK_EQ_U64(s.start[2], 0x401100);
    CHECK_EQ_U64(s.size[2], 0x80);
    /* the callback's first non-zero return ends the walk and is returned */
    seen stop = { .stop_at = 2 };
    CHECK_EQ_U64(go_functab_each(d, sizeof d, note, &stop), 42);
    CHECK_EQ_U64(stop.n, 2);
    /* the same table with magic 0xfffffff0 (Go 1.18-1.19) */
    put32(d, 0xfffffff0u);
    seen again = { 0 };
    go_functab_each(d, sizeof d, note, &again);
    CHECK_EQ_U64(again.n, 3);
    /* out of order: nothing */
    put32(d + 96 + 8, 0x200);
    seen none = { 0 };
    CHECK_EQ_U64(go_functab_each(d, sizeof d, note, &none), 0);
    CHECK_EQ_U64(none.n, 0);
}

static void test_go12_and_go116(void)
{
    /* Go 1.2: 16-byte entries {pc, funcoff} right after the header */
    uint8_t d[256] = { 0 };
    header(d, 0xfffffffbu, 2);
    uint64_t pcs[] = { 0x450000, 0x450020, 0x450070 };
    for (int i = 0; i < 3; i++)
        put64(d + 16 + 16 * i, pcs[i]);
    seen s = { 0 };
    go_functab_each(d, sizeof d, note, &s);
    CHECK_EQ_U64(s.n, 2);
    CHECK_EQ_U64(s.start[0], 0x450000);
    CHECK_EQ_U64(s.size[0], 0x20);
    CHECK_EQ_U64(s.start[1], 0x450020);
    CHECK_EQ_U64(s.size[1], 0x50);

    /* Go 1.16: the same entries at the offset the header gives at 56 */
    uint8_t e[256] = { 0 };
    header(e, 0xfffffffau, 2);
    put64(e + 56, 128);
    for (int i = 0; i < 3; i++)
        put64(e + 128 + 16 * i, pcs[i]);
    seen t = { 0 };
    go_functab_each(e, sizeof e, note, &t);
    CHECK_EQ_U64(t.n, 2);
    CHECK_EQ_U64(t.start[1], 0x450020);
    CHECK_EQ_U64(t.size[1], 0x50);
}

static void test_refused(void)
{
    uint8_t d[128] = { 0 };
    seen s = { 0 };
    header(d, 0xfffffff1u, 2);
    put64(d + 64, 80);
    d[7] = 4; /* 32-bit pointers */
    CHECK_EQ_U64(go_functab_each(d, sizeof d, note, &s), 0);
    d[7] = 8;
    header(d, 0x12345678u, 2); /* not a magic of Go's */
    CHECK_EQ_U64(go_functab_each(d, sizeof d, note, &s), 0);
    header(d, 0xfffffff1u, 1u << 30); /* more entries than the section holds */
    CHECK_EQ_U64(go_functab_each(d, sizeof d, note, &s), 0);
    header(d, 0xfffffff1u, 2);
    put64(d + 64, 1u << 20); /* the table past the end */
    CHECK_EQ_U64(go_functab_each(d, sizeof d, note, &s), 0);
    CHECK_EQ_U64(go_functab_each(d, 40, note, &s), 0); /* a truncated header */
    CHECK_EQ_U64(s.n, 0);
}

int main(void)
{
    test_go118();
    test_go12_and_go116();
    test_refused();
    return CHECK_DONE();
}
