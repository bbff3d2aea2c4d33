/*
 * test_heapmap.c - heap blocks over time: allocation, release, reuse of
 * addresses, realloc, partial munmap, lookups inside and outside blocks.
 */
#include "check.h"
#include "symbols/heapmap.h"

static memtap_record ev(uint8_t kind, uint64_t addr, uint64_t size,
                        uint64_t addr2, uint64_t id)
{
    memtap_record r;
    memset(&r, 0, sizeof r);
    r.kind = kind;
    r.addr = addr;
    r.size = size;
    r.addr2 = addr2;
    r.aux = id;
    r.pc = 0x5000 + id;
    return r;
}

static void apply(heap_map *m, memtap_record r)
{
    heap_map_apply(m, &r, NULL);
}

static void test_malloc_free_reuse(void)
{
    heap_map *m = heap_map_create();
    apply(m, ev('M', 0x1000, 16, 0, 0));
    apply(m, ev('C', 0x1020, 32, 0, 1));
    const heap_block *b = heap_map_find(m, 0x100f);
    CHECK(b && b->id == 0 && !b->released && b->kind == 'M');
    CHECK(heap_map_find(m, 0x1010) == NULL); /* between blocks */
    b = heap_map_find(m, 0x1020 + 31);
    CHECK(b && b->id == 1 && b->kind == 'C');
    CHECK(heap_map_find(m, 0x1020 + 32) == NULL);
    heap_block old;
    memtap_record f = ev('F', 0x1000, 0, 0, 0);
    CHECK(heap_map_apply(m, &f, &old) == 1 && old.id == 0 && old.released);
    b = heap_map_find(m, 0x1004);
    CHECK(b && b->id == 0 && b->released); /* use after free is named */
    CHECK_EQ_U64(heap_map_live(m), 1);
    /* the address is reused: the released block is forgotten */
    apply(m, ev('M', 0x1000, 8, 0, 2));
    b = heap_map_find(m, 0x1004);
    CHECK(b && b->id == 2 && !b->released);
    CHECK(heap_map_find(m, 0x100c) == NULL);
    /* freeing an unknown pointer changes nothing */
    f = ev('F', 0x9999, 0, 0, 0);
    CHECK(heap_map_apply(m, &f, &old) == 0);
    heap_map_destroy(m);
}

static void test_realloc(void)
{
    heap_map *m = heap_map_create();
    apply(m, ev('M', 0x2000, 10, 0, 0));
    heap_block old;
    memtap_record r = ev('R', 0x8000, 100, 0x2000, 1); /* moved */
    CHECK(heap_map_apply(m, &r, &old) == 1 && old.id == 0);
    const heap_block *b = heap_map_find(m, 0x2003);
    CHECK(b && b->id == 0 && b->released);
    b = heap_map_find(m, 0x8063);
    CHECK(b && b->id == 1 && b->kind == 'R');
    r = ev('R', 0x8000, 200, 0x8000, 2); /* grown in place */
    CHECK(heap_map_apply(m, &r, &old) == 1 && old.id == 1);
    b = heap_map_find(m, 0x8000 + 150);
    CHECK(b && b->id == 2 && !b->released);
    r = ev('R', 0, 0, 0x8000, 3); /* realloc(p, 0) */
    CHECK(heap_map_apply(m, &r, &old) == 1);
    b = heap_map_find(m, 0x8000);
    CHECK(b && b->released && b->id == 2);
    CHECK_EQ_U64(heap_map_live(m), 0);
    heap_map_destroy(m);
}

static void test_munmap(void)
{
    heap_map *m = heap_map_create();
    apply(m, ev('P', 0x10000, 0x4000, 0, 0));
    apply(m, ev('U', 0x11000, 0x1000, 0, 0)); /* a hole in the middle */
    const heap_block *b = heap_map_find(m, 0x10fff);
    CHECK(b && b->id == 0 && !b->released && b->size == 0x1000);
    b = heap_map_find(m, 0x11800);
    CHECK(b && b->id == 0 && b->released);
    b = heap_map_find(m, 0x12000);
    CHECK(b && !b->released && b->start == 0x12000 && b->size == 0x2000);
    apply(m, ev('U', 0x10000, 0x4000, 0, 0)); /* the rest */
    CHECK_EQ_U64(heap_map_live(m), 0);
    b = heap_map_find(m, 0x13fff);
    CHECK(b && b->released);
    /* mremap moves a mapping */
    apply(m, ev('P', 0x20000, 0x1000, 0, 1));
    apply(m, ev('E', 0x30000, 0x8000, 0x20000, 2));
    b = heap_map_find(m, 0x37fff);
    CHECK(b && b->id == 2 && b->kind == 'E');
    b = heap_map_find(m, 0x20000);
    CHECK(b && b->id == 1 && b->released);
    heap_map_destroy(m);
}

static void test_many(void)
{
    /* logarithmic structure: 200k blocks, interleaved frees */
    heap_map *m = heap_map_create();
    for (uint64_t i = 0; i < 200000; i++)
        apply(m, ev('M', 0x100000 + i * 64, 48, 0, i));
    for (uint64_t i = 0; i < 200000; i += 2)
        apply(m, ev('F', 0x100000 + i * 64, 0, 0, 0));
    CHECK_EQ_U64(heap_map_live(m), 100000);
    for (uint64_t i = 0; i < 200000; i += 997) {
        const heap_block *b = heap_map_find(m, 0x100000 + i * 64 + 47);
        CHECK(b && b->id == i && b->released == (i % 2 == 0));
        CHECK(heap_map_find(m, 0x100000 + i * 64 + 50) == NULL);
    }
    heap_map_destroy(m);
}

int main(void)
{
    test_malloc_free_reuse();
    test_realloc();
    test_munmap();
    test_many();
    return CHECK_DONE();
}
