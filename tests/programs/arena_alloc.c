/* A second allocator (as jemalloc is when preloaded): malloc and its
 * family from an arena of its own, and arena_new, which allocates without
 * going through malloc by name (jemalloc's C++ operators do so).  Freed
 * blocks are not reused; free leaves alone what is not the arena's (the
 * loader's early blocks). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define ARENA (64u << 20)

static char *arena, *next_free;

static void *take(size_t align, size_t size)
{
    if (!arena) {
        arena = mmap(NULL, ARENA, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (arena == MAP_FAILED)
            abort();
        next_free = arena;
    }
    uintptr_t at = ((uintptr_t)next_free + 16 + align - 1) & ~(uintptr_t)(align - 1);
    if (at + size > (uintptr_t)arena + ARENA)
        return NULL;
    ((size_t *)at)[-1] = size; /* for realloc */
    next_free = (char *)(at + size);
    return (void *)at;
}

int arena_owns(void *p)
{
    return arena && (char *)p >= arena && (char *)p < arena + ARENA;
}

void *arena_new(size_t size) { return take(16, size); }
void *malloc(size_t size) { return take(16, size); }
void *memalign(size_t align, size_t size) { return take(align < 16 ? 16 : align, size); }
void *aligned_alloc(size_t align, size_t size) { return memalign(align, size); }

int posix_memalign(void **out, size_t align, size_t size)
{
    *out = memalign(align, size);
    return *out ? 0 : 12; /* ENOMEM */
}

void *calloc(size_t n, size_t size)
{
    void *p = take(16, n * size);
    if (p)
        memset(p, 0, n * size);
    return p;
}

void free(void *p)
{
    (void)p;
}

void *realloc(void *old, size_t size)
{
    void *p = take(16, size);
    if (p && old) {
        size_t was = ((size_t *)old)[-1];
        memcpy(p, old, was < size ? was : size);
    }
    return p;
}
