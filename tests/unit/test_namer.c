/*
 * test_namer.c - structured names of heap addresses over time and their
 * text, without a symbolizer: the kinds, starts, offsets and regions of
 * data_name, block names as MadT Table II spells them (live, freed,
 * mapped, unmapped), the object without the offset, the parts show writes
 * itself, and the span a region answer holds for.  Every expected value
 * follows from the events the test feeds in.
 */
#include "check.h"
#include "symbols/namer.h"

static memtap_record ev(uint8_t kind, uint64_t addr, uint64_t size,
                        uint64_t id, uint64_t site)
{
    memtap_record r;
    memset(&r, 0, sizeof r);
    r.kind = kind;
    r.addr = addr;
    r.size = size;
    r.aux = id;
    r.pc = site;
    return r;
}

static void learn(namer *n, memtap_record r)
{
    namer_learn(n, &r, NULL);
}

static void test_heap_names(void)
{
    namer *n = namer_create(NULL, 0);
    CHECK(n != NULL);
    learn(n, ev('M', 0x1000, 64, 7, 0x401234));
    learn(n, ev('P', 0x20000, 8192, 8, 0x401300));
    data_name d;
    char buf[256];
    namer_data(n, 0x1008, &d);
    CHECK(d.kind == DATA_HEAP && d.start == 0x1000 && d.addr == 0x1008);
    CHECK(d.block.id == 7 && d.block.size == 64);
    CHECK_STREQ(d.region, "[heap]");
    namer_data_text(n, &d, buf, sizeof buf);
    CHECK_STREQ(buf, "<malloc0007@0x401234>+8");
    namer_object_text(n, &d, buf, sizeof buf);
    CHECK_STREQ(buf, "<malloc0007@0x401234>");
    /* a mapping: its own prefix and region */
    CHECK_STREQ(namer_name_data(n, 0x20000 + 4097, buf, sizeof buf),
                "[mmap]");
    CHECK_STREQ(buf, "<memmap0008@0x401300>+4097");
    /* the heap case in parts: the name kept, the offset apart */
    uint64_t off = 0;
    const char *region = NULL;
    size_t len = 0;
    const char *name = namer_heap_name(n, 0x1000 + 63, &off, &region, buf,
                                       sizeof buf, &len);
    CHECK(name && off == 63 && strcmp(region, "[heap]") == 0);
    CHECK_STREQ(name, "<malloc0007@0x401234>");
    CHECK(len == strlen("<malloc0007@0x401234>"));
    /* the name kept in the cache, with its length */
    len = 0;
    name = namer_heap_name(n, 0x1000 + 1, &off, &region, buf, sizeof buf,
                           &len);
    CHECK(name && name != buf && off == 1);
    CHECK(len == strlen("<malloc0007@0x401234>"));
    CHECK(namer_heap_name(n, 0x1000 + 64, &off, &region, buf, sizeof buf,
                          NULL) == NULL);
    /* outside every block, with no symbolizer: only the number */
    namer_data(n, 0x1040, &d);
    CHECK(d.kind == DATA_UNKNOWN && strcmp(d.region, "[unknown]") == 0);
    namer_data_text(n, &d, buf, sizeof buf);
    CHECK_STREQ(buf, "0x1040");
    namer_object_text(n, &d, buf, sizeof buf);
    CHECK_STREQ(buf, "0x1040");
    namer_destroy(n);
}

static void test_released(void)
{
    namer *n = namer_create(NULL, 0);
    learn(n, ev('M', 0x1000, 32, 3, 0x401000));
    learn(n, ev('P', 0x30000, 4096, 4, 0x401100));
    heap_block old;
    memtap_record f = ev('F', 0x1000, 0, 0, 0x401050);
    CHECK(namer_learn(n, &f, &old) == 1 && old.id == 3 && old.released);
    char buf[256];
    /* a use after free is named as such: the block stays known */
    namer_name_data(n, 0x1004, buf, sizeof buf);
    CHECK_STREQ(buf, "<freed:0003@0x401000>+4");
    memtap_record u = ev('U', 0x30000, 4096, 0, 0x401150);
    CHECK(namer_learn(n, &u, &old) == 1 && old.id == 4);
    namer_name_data(n, 0x30010, buf, sizeof buf);
    CHECK_STREQ(buf, "<unmap:0004@0x401100>+16");
    /* the kept name follows the block's state, not its number alone */
    learn(n, ev('M', 0x1000, 32, 3 + 1024, 0x401000));
    namer_name_data(n, 0x1004, buf, sizeof buf);
    CHECK_STREQ(buf, "<malloc1027@0x401000>+4");
    /* events that are not the heap's change nothing */
    memtap_record load = ev('L', 0x1000, 8, 0, 0x401200);
    CHECK(namer_learn(n, &load, &old) == 0);
    namer_destroy(n);
}

static void test_region_span(void)
{
    namer *n = namer_create(NULL, 0);
    learn(n, ev('M', 0x5000, 100, 0, 0x401000));
    uint64_t lo = 1, hi = 1;
    CHECK_STREQ(namer_region(n, 0x5010, &lo, &hi), "[heap]");
    CHECK(lo == 0x5000 && hi == 0x5000 + 100);
    CHECK_STREQ(namer_region(n, 0x9000, &lo, &hi), "[unknown]");
    CHECK(lo == 0 && hi == 0);
    char buf[64];
    size_t len = 0;
    CHECK_STREQ(namer_code(n, 0x401abc, buf, sizeof buf, &len), "0x401abc");
    CHECK(len == 8);
    namer_destroy(n);
}

int main(void)
{
    test_heap_names();
    test_released();
    test_region_span();
    return CHECK_DONE();
}
