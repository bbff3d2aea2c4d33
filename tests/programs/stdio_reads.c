/* Writes 300 bytes to a file of its own with fwrite, reads them back with
 * fread in three pieces into a heap block, and prints their sum: both
 * engines must record fread and fwrite as block events at these call
 * sites and nothing of the C library's work inside them.  The file is
 * named by the process id, not by mkstemp, whose random names draw
 * getrandom a varying number of times (rejection sampling), so that two
 * runs do the same accesses. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(void)
{
    char path[64];
    /* six digits whatever the pid, so that the formatting's work is too */
    snprintf(path, sizeof path, "/tmp/memtap-stdio-%ld",
             100000 + (long)getpid() % 100000);
    unsigned char *block = malloc(300);
    for (int i = 0; i < 300; i++)
        block[i] = (unsigned char)(i * 7);
    FILE *f = fopen(path, "w");
    if (!f || fwrite(block, 1, 300, f) != 300 || fclose(f) != 0)
        return 2;
    unsigned char *back = malloc(300);
    f = fopen(path, "r");
    size_t n = 0;
    for (int k = 0; f && k < 3; k++)
        n += fread(back + 100 * k, 1, 100, f);
    if (f)
        fclose(f);
    unlink(path);
    unsigned sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += back[i];
    printf("%zu %u\n", n, sum);
    free(back);
    free(block);
    return 0;
}
