/*
 * copied_code.c - code the program copies to a mapping of its own and runs
 * there, as V8 copies its embedded builtins (node) next to the code it
 * generates: a blob under V8's symbols (its start, and its size as 4 bytes
 * of read-only data) whose loop loads an array.  Prints the sum from the
 * blob in place and from the copy; a rewriter that patched the blob would
 * send the copy's jumps anywhere.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

__asm__(".text\n"
        ".globl v8_Default_embedded_blob_code_\n"
        ".type v8_Default_embedded_blob_code_, @function\n"
        "v8_Default_embedded_blob_code_:\n"
        "  xor %eax, %eax\n"
        "1: test %rsi, %rsi\n"
        "  jz 2f\n"
        "  add (%rdi), %rax\n"
        "  add $8, %rdi\n"
        "  dec %rsi\n"
        "  jmp 1b\n"
        "2: ret\n"
        "blob_end:\n"
        ".size v8_Default_embedded_blob_code_, blob_end - v8_Default_embedded_blob_code_\n"
        ".section .rodata\n"
        ".globl v8_Default_embedded_blob_code_size_\n"
        "v8_Default_embedded_blob_code_size_:\n"
        "  .long blob_end - v8_Default_embedded_blob_code_\n"
        ".text\n");

extern char v8_Default_embedded_blob_code_[];
extern const uint32_t v8_Default_embedded_blob_code_size_;

typedef long (*sum_fn)(const long *, long);

int main(void)
{
    static long values[100];
    for (int i = 0; i < 100; i++)
        values[i] = i * 3;
    uint32_t size = v8_Default_embedded_blob_code_size_;
    void *copy = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (copy == MAP_FAILED)
        return 1;
    memcpy(copy, v8_Default_embedded_blob_code_, size);
    if (mprotect(copy, 4096, PROT_READ | PROT_EXEC) != 0)
        return 1;
    long here = ((sum_fn)(void *)v8_Default_embedded_blob_code_)(values, 100);
    long there = ((sum_fn)copy)(values, 100);
    printf("in place %ld, copied %ld\n", here, there);
    return here == there ? 0 : 2;
}
