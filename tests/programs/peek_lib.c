/* A library for dlreload: peek reads an int through an instruction of
 * two bytes that another function's entry follows, which the rewriter
 * can only reach through an int3 site.  Built twice: the second copy (PEEK_BIG)
 * carries 4 MiB of data, so that it does not fit where the first was. */
#include <stdint.h>

__asm__(".text\n"
        ".globl peek\n"
        ".type peek, @function\n"
        "peek:\n"
        "    movl (%rdi), %eax\n"
        ".globl peek_done\n"
        ".type peek_done, @function\n"
        "peek_done:\n" /* another entry right after: no jump fits */
        "    ret\n"
        ".size peek, peek_done - peek\n"
        ".size peek_done, 1\n");

#ifdef PEEK_BIG
const uint8_t peek_ballast[4u << 20] = { 1 };
#endif
