/* string_compare.c - cmps and scas, which stop where the data says:
 *   repe cmpsb over two 64-byte heap blocks that differ at byte 37:
 *     38 iterations, 76 loads ([rsi], then [rdi], each)
 *   repne scasb for the byte 0x7f at index 100 of a 256-byte block:
 *     101 loads
 *   repne scasq, downwards (std), for a value 3 quadwords below the start:
 *     4 loads
 *   one cmpsw without a prefix: 2 loads
 * Built at -O0; the blocks are the program's only heap accesses here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
    unsigned char *a = malloc(64), *b = malloc(64), *s = malloc(256);
    long *q = malloc(16 * sizeof *q);
    for (int i = 0; i < 64; i++)
        a[i] = b[i] = (unsigned char)i;
    b[37] = 0xee;
    for (int i = 0; i < 256; i++)
        s[i] = (unsigned char)(i == 100 ? 0x7f : 1);
    for (int i = 0; i < 16; i++)
        q[i] = i == 5 ? 4242 : -1;

    const unsigned char *x = a, *y = b;
    unsigned long n = 64;
    __asm__ volatile("repe cmpsb" : "+S"(x), "+D"(y), "+c"(n) : : "memory", "cc");
    unsigned long cmps_left = n;

    const unsigned char *z = s;
    n = 256;
    __asm__ volatile("repne scasb" : "+D"(z), "+c"(n) : "a"(0x7f) : "memory", "cc");
    unsigned long scas_at = (unsigned long)(z - s) - 1;

    const long *w = &q[8];
    n = 16;
    __asm__ volatile("std\n\trepne scasq\n\tcld"
                     : "+D"(w), "+c"(n) : "a"(4242L) : "memory", "cc");

    const unsigned char *u = a, *v = b;
    __asm__ volatile("cmpsw" : "+S"(u), "+D"(v) : : "memory", "cc");

    printf("%lu %lu %lu\n", cmps_left, scas_at, n);
    free(q);
    free(s);
    free(b);
    free(a);
    return 0;
}
