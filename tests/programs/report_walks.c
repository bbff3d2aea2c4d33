/* report_walks.c - objects with known access patterns and a known heap,
 * for `memtap report`.  Built at -O0: every access below is one
 * instruction and the locals live on the stack (not traced by default).
 *   seq_arr: 256 stores, 4 bytes apart, in order        -> sequential
 *   records (heap, one block of 64 x 16 bytes): 64 loads of one field
 *                                                       -> strided +16
 *   table: 100 loads at indexes from a generator        -> random
 *   gone (heap): 1 store, then 3 loads after its free   -> 3 after free
 *   10 blocks freed right after their allocation        -> 10 temporary
 *   kept (heap, 1000 bytes): never freed                -> not freed
 */
#include <stdio.h>
#include <stdlib.h>

#pragma GCC diagnostic ignored "-Wuse-after-free"

struct record { int key; int value; long pad; };

volatile int seq_arr[256];
volatile int table[64];

int main(void)
{
    for (int i = 0; i < 256; i++)
        seq_arr[i] = i;

    volatile struct record *records = malloc(64 * sizeof *records);
    long sum = 0;
    for (int i = 0; i < 64; i++)
        sum += records[i].value;

    unsigned x = 12345;
    for (int i = 0; i < 100; i++) {
        x = x * 1103515245u + 12345u;
        sum += table[(x >> 16) % 64];
    }

    volatile int *gone = malloc(64);
    gone[0] = 1;
    free((void *)gone);
    for (int i = 0; i < 3; i++)
        sum += gone[4]; /* deliberately after free */

    for (int i = 0; i < 10; i++)
        free(malloc(32));
    void *kept = malloc(1000);

    printf("%ld %s\n", sum & 1, kept ? "kept" : "none");
    free((void *)records);
    return 0;
}
