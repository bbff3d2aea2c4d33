/* Writes 300 bytes to a file of its own with fwrite, reads them back with
 * fread in three pieces into a heap block, and prints their sum: both
 * engines must record fread and fwrite as block events at these call
 * sites and nothing of the C library's work inside them. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(void)
{
    char path[] = "/tmp/memtap-stdio-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return 1;
    close(fd);
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
