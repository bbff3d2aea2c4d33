/* Every allocator of the malloc family once, from main, in a known order. */
#include <malloc.h>
#include <stdlib.h>

void *volatile sink;
void *volatile none; /* NULL the compiler cannot see through */

int main(void)
{
    void *a = malloc(10);                 /* M 0 */
    void *b = calloc(4, 25);              /* C 1, 100 bytes */
    a = realloc(a, 100000);               /* R 2, old block a freed */
    void *c = realloc(none, 7);           /* R 3 (from nothing) */
    c = realloc(c, 0);                    /* R 4 (to nothing: frees) */
    void *d = reallocarray(none, 3, 8);   /* R 5, 24 bytes */
    void *e;
    if (posix_memalign(&e, 64, 40) != 0)  /* M 6, aligned */
        return 1;
    void *f = aligned_alloc(128, 256);    /* M 7, aligned */
    void *g = memalign(32, 33);           /* M 8, aligned */
    void *h = valloc(5);                  /* M 9, aligned */
    void *i = pvalloc(5);                 /* M 10, aligned, one page */
    sink = c;
    free(a);
    free(b);
    free(d);
    free(e);
    free(f);
    free(g);
    free(h);
    free(i);
    free(none);                           /* not an event */
    return 0;
}
