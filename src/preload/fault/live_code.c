/*
 * live_code.c - changing code while other threads run it, and the pages
 * that hold trampolines (see live_code.h).
 *
 * A patched instruction becomes a jmp rel32 whose displacement's low
 * bytes are the instruction's and whose high bytes are the bytes that
 * follow it, left as they are (a punned jump), so the trampoline goes
 * where those bytes allow: a free page within 256 bytes to 4 GiB of the
 * instruction, mapped for it with MAP_FIXED_NOREPLACE.
 */
#define _GNU_SOURCE
#include "live_code.h"
#include "sys/page.h"
#include "sys/rawsys.h"

#include "complete.h"

#include <linux/membarrier.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#define MAX_PAGES 1024          /* trampoline pages */
#define PAGE_TRIES 64           /* mmaps tried for one trampoline */
#define BRK_ROOM (128ull << 20) /* the heap's room to grow, kept free */
#define STACK_ROOM (1ull << 30) /* the main stack's, at most */
#define USER_TOP ((1ull << 47) - 1) /* the last user address */

typedef struct tramp_page {
    uint64_t addr;
    uint32_t used;
} tramp_page;

static struct {
    tramp_page pages[MAX_PAGES];
    uint32_t npages;
    uint64_t stack_floor; /* the main stack's room to grow starts */
} lc;

static int sync_cores(void)
{
    return RAW_FAILED(raw_syscall3(SYS_membarrier,
                                   MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE,
                                   0, 0))
               ? -1
               : 0;
}

int live_code_init(void)
{
    if (RAW_FAILED(raw_syscall3(SYS_membarrier,
                                MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE,
                                0, 0)))
        return -1;
    /* the main stack (this thread's, at start-up) may grow to its limit */
    struct { uint64_t cur, max; } lim;
    uint64_t sp = (uint64_t)(uintptr_t)__builtin_frame_address(0);
    if (RAW_FAILED(raw_syscall6(SYS_prlimit64, 0, RLIMIT_STACK, 0, (long)&lim,
                                0, 0)) ||
        lim.cur > STACK_ROOM)
        lim.cur = STACK_ROOM;
    lc.stack_floor = sp > lim.cur ? page_start(sp - lim.cur) : 0;
    return 0;
}

int live_code_write(uint64_t pc, const uint8_t *bytes, size_t len)
{
    static const uint8_t int3 = 0xcc;
    uint8_t was[16];
    if (len > sizeof was || complete_peek(was, len, pc) != 0 ||
        complete_poke(pc, &int3, 1) != 0)
        return -1;
    if (sync_cores() != 0 ||
        (len > 1 && (complete_poke(pc + 1, bytes + 1, len - 1) != 0 ||
                     sync_cores() != 0))) {
        /* no int3 left behind: the old tail, then the old head */
        if (len > 1)
            complete_poke(pc + 1, was + 1, len - 1);
        complete_poke(pc, was, 1);
        return -1;
    }
    return complete_poke(pc, bytes, 1) == 0 && sync_cores() == 0 ? 0 : -1;
}

/* Whether page p may hold trampolines: clear of the first megabyte, of
 * the main stack's room to grow (its limit, at most STACK_ROOM) and of
 * BRK_ROOM above the break.  A heap that grows past a page
 * there continues in mmap'd memory (glibc's malloc does so when brk
 * fails); more room would leave most sites unreachable, as the break is
 * placed up to 1 GiB after the program's data and a jump whose
 * displacement ends in a REX prefix (0x48) reaches 1.1 GiB onwards. */
static int page_allowed(uint64_t p)
{
    uint64_t brk = (uint64_t)raw_syscall3(SYS_brk, 0, 0, 0);
    return p >= (1u << 20) && p < lc.stack_floor &&
           !(p >= brk && p < brk + BRK_ROOM);
}

/* A trampoline slot at t in [lo, hi] (the displacements the site's fixed
 * bytes allow): one of the pages already mapped, or a new one.  0 with *t,
 * or -1. */
static int find_slot(uint64_t lo, uint64_t hi, size_t bytes, uint64_t *t)
{
    if (hi < lo + bytes)
        return -1;
    for (uint32_t i = 0; i < lc.npages; i++) {
        tramp_page *pg = &lc.pages[i];
        uint64_t at = pg->addr + pg->used;
        if (at < lo) /* a page the window starts inside */
            at = (lo + 7) & ~7ull;
        if (at >= pg->addr + pg->used && at + bytes <= pg->addr + PAGE &&
            at <= hi) {
            pg->used = (uint32_t)(at + bytes - pg->addr);
            *t = at;
            return 0;
        }
    }
    if (lc.npages == MAX_PAGES)
        return -1;
    /* pages through the window from its middle outwards (near the site
     * when the window is the whole rel32 range), a few over a wide one */
    uint64_t first = page_start(lo), n = (page_start(hi) - first) / PAGE + 1;
    uint64_t step = n > PAGE_TRIES ? n / PAGE_TRIES : 1;
    for (uint64_t k = 0; k < 2 * PAGE_TRIES; k++) {
        int64_t d = (int64_t)((k + 1) / 2) * (k % 2 ? 1 : -1);
        int64_t idx = (int64_t)(n / 2) + d * (int64_t)step;
        if (idx < 0 || (uint64_t)idx >= n)
            continue;
        uint64_t p = first + (uint64_t)idx * PAGE;
        uint64_t at = p < lo ? (lo + 7) & ~7ull : p;
        if (!page_allowed(p) || at + bytes > p + PAGE || at > hi)
            continue;
        long got = raw_syscall6(SYS_mmap, (long)p, PAGE, PROT_READ | PROT_EXEC,
                                MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
                                -1, 0);
        if (RAW_FAILED(got))
            continue;
        if ((uint64_t)got != p) { /* a kernel without MAP_FIXED_NOREPLACE */
            raw_syscall3(SYS_munmap, got, PAGE, 0);
            continue;
        }
        lc.pages[lc.npages++] =
            (tramp_page){ .addr = p, .used = (uint32_t)(at + bytes - p) };
        *t = at;
        return 0;
    }
    return -1;
}

/* The window of trampoline addresses a jmp rel32 written over the first
 * len bytes at pc can reach, the rest of its displacement being `tail`
 * (the bytes after the instruction), cut to the user half of the address
 * space: a program linked at 0x400000 (python3.11, not position-
 * independent) has half its rel32 range below address 0, which wrapped
 * around and left every site of it unpatched.  Empty: *hi < *lo. */
static void reach(uint64_t pc, size_t len, const uint8_t *tail, uint64_t *lo,
                  uint64_t *hi)
{
    size_t free_bytes = len - 1 < 4 ? len - 1 : 4;
    uint32_t fixed = 0;
    for (size_t i = free_bytes; i < 4; i++)
        fixed |= (uint32_t)tail[i - free_bytes] << (8 * i);
    int64_t span = free_bytes == 4 ? (1ll << 32) : (1ll << (8 * free_bytes));
    int64_t low = free_bytes == 4 ? INT32_MIN : (int64_t)(int32_t)fixed;
    int64_t from = (int64_t)(pc + 5) + low, to = from + span - 1;
    *lo = from < 0 ? 0 : (uint64_t)from;
    *hi = to > (int64_t)USER_TOP ? USER_TOP : to < 0 ? 0 : (uint64_t)to;
}

int live_code_slot(uint64_t pc, size_t len, const uint8_t *tail, size_t bytes,
                   uint64_t *at)
{
    uint64_t lo, hi;
    reach(pc, len, tail, &lo, &hi);
    return find_slot(lo, hi, bytes, at);
}
