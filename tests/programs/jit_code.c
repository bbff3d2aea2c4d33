/*
 * jit_code.c - generates code at run time, as a JIT does: a function that
 * loads the int its argument points at (mov (%rdi), %eax; ret), in a
 * mapping made executable at once (argv[1] "rwx") or written first and
 * then made executable by mprotect ("wx"); calls it on a heap block and
 * prints where the code lies and what it loaded (42).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

int main(int argc, char **argv)
{
    int wx = argc > 1 && strcmp(argv[1], "wx") == 0;
    static const unsigned char load_int[] = { 0x8b, 0x07, 0xc3 };
    int prot = PROT_READ | PROT_WRITE | (wx ? 0 : PROT_EXEC);
    unsigned char *code = mmap(NULL, 4096, prot, MAP_PRIVATE | MAP_ANONYMOUS,
                               -1, 0);
    int *value = malloc(sizeof *value);
    if (code == MAP_FAILED || !value)
        return 1;
    memcpy(code, load_int, sizeof load_int);
    if (wx && mprotect(code, 4096, PROT_READ | PROT_EXEC) != 0)
        return 1;
    *value = 42;
    int (*fn)(const int *) = (int (*)(const int *))(void *)code;
    printf("code %p: %d\n", (void *)code, fn(value));
    free(value);
    return 0;
}
