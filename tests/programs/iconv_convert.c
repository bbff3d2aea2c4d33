/*
 * iconv_convert.c - converts 15 ISO-8859-15 characters in a heap block of
 * 64 bytes to UTF-16LE in a heap block of 256 through iconv, whose
 * conversion modules (gconv/ISO8859-15.so, gconv/UTF-16.so) the C library
 * loads itself, not through dlopen; prints how many bytes came out (30).
 */
#include <iconv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
    iconv_t cd = iconv_open("UTF-16LE", "ISO-8859-15");
    char *in = malloc(64), *out = malloc(256);
    if (cd == (iconv_t)-1 || !in || !out) {
        perror("iconv_convert");
        return 1;
    }
    strcpy(in, "hello, memtap \xa4"); /* the euro sign */
    char *ip = in, *op = out;
    size_t il = strlen(in), ol = 256;
    if (iconv(cd, &ip, &il, &op, &ol) == (size_t)-1) {
        perror("iconv");
        return 1;
    }
    printf("%zu bytes\n", (size_t)(op - out));
    iconv_close(cd);
    free(out);
    free(in);
    return 0;
}
