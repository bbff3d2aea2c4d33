/* Prints the addresses of known places in its globals and heap, one per
 * line as "name address", for memtap symbolize to name back. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct limit {
    int lo;
    int hi;
};

struct config {
    char name[8];
    struct limit limits[4];
    double grid[3][5];
} config = { "cfg", { { 0, 1 } }, { { 0 } } };

static int counter = 42;
long table[16];
union word {
    int i;
    char c[6];
} word;

__attribute__((noinline)) char *make_buffer(void)
{
    char *p = malloc(100);
    return p;
}

int main(void)
{
    char *buf = make_buffer();
    char *gone = malloc(10);
    uintptr_t gone_at = (uintptr_t)gone + 3;
    free(gone);
    printf("config.limits[3].hi %p\n", (void *)&config.limits[3].hi);
    printf("config.name[2] %p\n", (void *)&config.name[2]);
    printf("config.grid[2][4] %p\n", (void *)&config.grid[2][4]);
    printf("config.limits[1].lo+2 %p\n", (void *)((char *)&config.limits[1].lo + 2));
    printf("counter %p\n", (void *)&counter);
    printf("table[5] %p\n", (void *)&table[5]);
    /* right after an element of table: the first byte past it is not
     * table's (whatever lies there) */
    printf("table[15] %p\n", (void *)&table[15]);
    printf("past_table %p\n", (void *)(table + 16));
    printf("word.c[5] %p\n", (void *)&word.c[5]); /* past the union's int */
    printf("buffer+17 %p\n", (void *)(buf + 17));
    printf("gone+3 %p\n", (void *)gone_at);
    printf("stdout %p\n", (void *)&stdout);     /* copied into .bss */
    printf("_IO_2_1_stdin_+8 %p\n", (void *)((char *)stdin + 8)); /* libc */
    printf("main %p\n", (void *)main);
    fflush(stdout);
    /* buf stays allocated: its name is looked up at the end of the run */
    return counter == 42 ? 0 : 1;
}
