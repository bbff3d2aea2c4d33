/*
 * stub_holes_asm.S - walk(p, 0): WALK_STEPS blocks of `add %eax, (p)` (2
 * bytes), `add %ecx, 4(p)` and a branch not taken, eax 1 and ecx 2: a
 * window of the two additions in each, whose jump covers the second
 * one's first byte (an int3 place its displacement's second byte
 * carries: places 256 bytes long every 64 KiB, in every hole).
 * Rewritten non-selectively their trampolines take more than
 * MT_HOLE_PERIOD bytes, so the segment leaves a stub hole among them
 * (rt/abi.h), where the lowest places for these stubs are.
 */
#define WALK_STEPS 120000
    .text
    .globl walk
    .type walk, @function
walk:
    movl $1, %eax
    movl $2, %ecx
    .rept WALK_STEPS
    addl %eax, (%rdi)
    addl %ecx, 4(%rdi)
    testl %esi, %esi
    jne 9f
    .endr
9:
    ret
    .size walk, .-walk
    .section .note.GNU-stack,"",@progbits
