/*
 * consumer_tally.c - a user consumer for `memtap run --consumer`: counts
 * the loads and stores each instruction logged and, at the end, writes
 * "PC LOADS STORES BATCHES" lines (PC in hex, runtime address) to the
 * file $TALLY_OUT.  Thread-safe through atomic counters in a fixed
 * open-addressing table; no allocation.
 */
#include "memtap/consumer.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define SLOTS 65536u

static struct {
    uint64_t pc;
    uint64_t loads, stores;
} table[SLOTS];
static uint64_t batches, bad;

static void add(uint64_t pc, uint8_t kind, uint32_t count)
{
    for (uint32_t h = (uint32_t)(pc * 0x9e3779b97f4a7c15ull >> 48), n = 0;
         n < SLOTS; h = (h + 1) % SLOTS, n++) {
        uint64_t cur = __atomic_load_n(&table[h].pc, __ATOMIC_ACQUIRE);
        if (cur == 0) {
            uint64_t zero = 0;
            if (!__atomic_compare_exchange_n(&table[h].pc, &zero, pc, 0,
                                             __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
                cur = zero;
            else
                cur = pc;
        }
        if (cur == pc) {
            __atomic_add_fetch(kind == 'L' ? &table[h].loads : &table[h].stores,
                               count, __ATOMIC_RELAXED);
            return;
        }
    }
}

void memtap_consume(const memtap_access *a, size_t n)
{
    __atomic_add_fetch(&batches, 1, __ATOMIC_RELAXED);
    for (size_t i = 0; i < n; i++) {
        if ((a[i].kind != 'L' && a[i].kind != 'S') || a[i].size == 0)
            __atomic_add_fetch(&bad, 1, __ATOMIC_RELAXED);
        add(a[i].pc, a[i].kind, a[i].count);
    }
}

void memtap_consume_end(void)
{
    const char *path = getenv("TALLY_OUT");
    int fd = path ? open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644) : -1;
    if (fd < 0)
        return;
    char line[128];
    int len = snprintf(line, sizeof line, "batches %llu bad %llu\n",
                       (unsigned long long)batches, (unsigned long long)bad);
    if (write(fd, line, (size_t)len) != len)
        return;
    for (uint32_t i = 0; i < SLOTS; i++) {
        if (!table[i].pc)
            continue;
        len = snprintf(line, sizeof line, "%llx %llu %llu\n",
                       (unsigned long long)table[i].pc,
                       (unsigned long long)table[i].loads,
                       (unsigned long long)table[i].stores);
        if (write(fd, line, (size_t)len) != len)
            break;
    }
    close(fd);
}
