/* Run with libarena_alloc preloaded: blocks from malloc, calloc, realloc
 * and posix_memalign are the arena's, and a block of arena_new (not
 * through malloc) goes to free by name.  Prints how many of the four
 * were the arena's, then "freed". */
#include <stdio.h>
#include <stdlib.h>

int arena_owns(void *p);
void *arena_new(size_t size);

int main(void)
{
    void *a = malloc(100);
    void *b = calloc(10, 10);
    void *c = realloc(NULL, 300);
    void *d = NULL;
    if (posix_memalign(&d, 64, 200) != 0)
        return 1;
    printf("%d of 4\n", arena_owns(a) + arena_owns(b) + arena_owns(c) + arena_owns(d));
    free(a);
    free(b);
    free(c);
    free(d);
    free(arena_new(50));
    puts("freed");
    return 0;
}
