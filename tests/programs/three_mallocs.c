/* Exactly three mallocs from three known functions, and one free; no stdio,
 * so the C library allocates nothing of its own. */
#include <stdlib.h>

void *keep[3];

__attribute__((noinline)) void *alloc_a(void)
{
    void *p = malloc(16);
    keep[0] = p;
    return p;
}

__attribute__((noinline)) void *alloc_b(void)
{
    void *p = malloc(32);
    keep[1] = p;
    return p;
}

__attribute__((noinline)) void *alloc_c(void)
{
    void *p = malloc(48);
    keep[2] = p;
    return p;
}

__attribute__((noinline)) void release_b(void)
{
    free(keep[1]);
    keep[1] = 0;
}

int main(void)
{
    alloc_a();
    alloc_b();
    alloc_c();
    release_b();
    return 0;
}
