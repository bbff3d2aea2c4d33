/*
 * swaps_asm.S - a store, a string operation (recorded as an event of its
 * own) and two more accesses through the first store's register, laid
 * out by hand for swaps.c: the accesses after the string operation are
 * logged, not elided, so that the event stays between them.
 */
    .text

/* long stamp(long *r, const long *src, long *dst): r[0] = 1, dst[0..4) =
 * src[0..4), r[1] = 2; returns r[0]. */
    .globl stamp
    .type stamp, @function
stamp:
    mov %rdi, %r8
    movq $1, (%r8)
    mov %rdx, %rdi
    mov $4, %ecx
    rep movsq
    movq $2, 8(%r8)
    mov (%r8), %rax
    ret
    .size stamp, .-stamp

    .section .note.GNU-stack, "", @progbits
