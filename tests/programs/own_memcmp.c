/* Defines memcmp and strlen itself, as every AddressSanitizer program
 * does, and has them touch a heap block (as ASan's touch its shadow): code
 * memtap runs inside its handlers must never call them (the fault engine
 * faulted into itself and spun, every signal blocked). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

static volatile long *touched;

int memcmp(const void *a, const void *b, size_t n)
{
    const unsigned char *x = a, *y = b;
    if (touched)
        touched[0]++;
    for (size_t i = 0; i < n; i++)
        if (x[i] != y[i])
            return x[i] < y[i] ? -1 : 1;
    return 0;
}

size_t strlen(const char *s)
{
    size_t n = 0;
    if (touched)
        touched[1]++;
    while (s[n])
        n++;
    return n;
}

int main(void)
{
    touched = calloc(2, sizeof *touched);
    long *cells = malloc(1000 * sizeof *cells);
    long sum = 0;
    for (int round = 0; round < 50; round++)
        for (int i = 0; i < 1000; i++) {
            cells[i] = i + round;
            sum += cells[(i * 7) % 1000];
        }
    int same = memcmp(cells, cells + 1, 8) != 0;
    printf("sum %ld differ %d len %zu\n", sum, same, strlen("memtap"));
    return 0;
}
