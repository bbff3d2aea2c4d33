/* A library whose initializer writes a table of its own and allocates:
 * the loader runs it before libmemtap.so's constructor, so the static
 * engine records it only through the copy's start stub (rt/abi.h). */
#include <stdlib.h>

int init_table[32];
void *init_block;

__attribute__((constructor)) static void fill_table(void)
{
    for (int i = 0; i < 32; i++)
        init_table[i] = i * 3;
    init_block = malloc(55);
}

int init_sum(void)
{
    int s = 0;
    for (int i = 0; i < 32; i++)
        s += init_table[i];
    return s;
}
