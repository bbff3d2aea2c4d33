/*
 * dropped_window_asm.S - step(), laid out by hand for dropped_window.c:
 * a window whose jump is written only for the jump before to share its
 * last byte (a prefix), which reaches past its jump over an instruction
 * a short branch enters.  The site window (mov, inc: 4 bytes) shares its
 * jump's last byte with `test` (0x85: a jump cannot end on it), so test
 * and add get a window of their own with a prefixed jump, taking in the
 * short branch after them to an int3 place (.Lplace has no room for a
 * jump); the first jne enters that window past its jump, at .Linner.
 * before() ends in padding where a jump for a short branch may go.
 */
    .text
    .globl before
    .type before, @function
before:
    mov %edi, %eax
    ret
    .fill 24, 1, 0xcc
    .size before, .-before

/* int step(const int *p, int skip) */
    .globl step
    .type step, @function
step:
    xor %eax, %eax
    test %esi, %esi
    jne .Linner
    mov (%rdi), %eax
    inc %eax
    test %eax, %eax
    add $0x10, %rax
.Linner:
    jne .Lplace
    ret
.Lplace:
    mov (%rdi), %edx
    ret
    .size step, .-step

    .globl after
    .type after, @function
after:
    mov %edi, %eax
    ret
    .size after, .-after

    .section .note.GNU-stack, "", @progbits
