/*
 * nopie_stores.c - two stores to the heap by instructions of seven and
 * ten bytes, 1000 times, in a program linked at 0x400000 (not position-
 * independent: tests/programs/CMakeLists.txt).  A jump written over
 * either may reach anywhere 2 GiB around it, half of that below address
 * 0: the fault engine patches both once they are hot.
 */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    int *p = malloc(4096);
    if (!p)
        return 1;
    for (int i = 0; i < 1000; i++)
        __asm__ volatile("movl $0x12345, 0x10(%0)\n\t"
                         "movl $0x6789, 0x200(%0)"
                         : : "r"(p) : "memory");
    printf("%x %x\n", p[4], p[128]);
    free(p);
    return 0;
}
