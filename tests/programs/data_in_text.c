/*
 * data_in_text.c - a table kept among the instructions, as hand-written
 * assembly keeps its lookup tables in .text: its bytes decode as plausible
 * code (a conditional jump, loads, a ret) that no path reaches, and the
 * program reads them.  A rewritten copy must leave them as they are.
 */
#include <stdio.h>
extern const unsigned char table[], table_end[];
__asm__(".text\n"
        ".p2align 4\n"
        "table:\n"
        /* bytes that decode as: jl .+4; mov (%rdi),%eax; mov 8(%rdi),%eax;
           add (%rsi),%ecx; ret  -- data the program reads, not code */
        ".byte 0x7c, 0x02, 0x8b, 0x07, 0x8b, 0x47, 0x08, 0x03, 0x0e, 0x8b, 0x4f, 0x10, 0xc3\n"
        "table_end:\n"
        ".byte 0x90, 0x90, 0x90\n");
int main(void)
{
    unsigned sum = 0, i = 0;
    for (const unsigned char *p = table; p < table_end; p++)
        sum = sum * 31 + *p + i++;
    printf("table checksum %u\n", sum);
    return 0;
}
