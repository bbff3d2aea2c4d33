/*
 * lk_block_edges_asm.S - memory instructions with no room for a jump in
 * their own basic block, laid out by hand (see lk_block_edges.c).
 */
    .text

/* long loop_head(const long *p, long n): the sum of p[0..n), n > 0.  The
 * load is a block of its own (branches lead to it and to the instruction
 * after it), entered once by falling through a conditional branch and
 * n - 1 times by the loop's short back edge. */
    .globl loop_head
    .type loop_head, @function
loop_head:
    xor %eax, %eax
    cmp $-12345, %rsi
    {disp32} je .Lhead          /* never taken: a branch with a rel32 */
    cmp $-54321, %rsi
    je .Lnext                   /* never taken: .Lnext starts a block */
    test %rsi, %rsi
    jle .Ldone
.Lhead:
    mov (%rdi), %rdx
.Lnext:
    add %rdx, %rax
    add $8, %rdi
    dec %rsi
    jne .Lhead
.Ldone:
    ret
    .size loop_head, .-loop_head

/* long short_entry(const long *p, long n): the same sum, n > 0, but the
 * load is entered only by a short branch from a block with nothing to
 * instrument. */
    .globl short_entry
    .type short_entry, @function
short_entry:
    xor %eax, %eax
    cmp $-12345, %rsi
    je .Lafter                  /* never taken: .Lafter starts a block */
    jmp .Ltest
.Lload:
    mov (%rdi), %rdx
.Lafter:
    add %rdx, %rax
    add $8, %rdi
    dec %rsi
.Ltest:
    test %rsi, %rsi
    jne .Lload
    ret
    .size short_entry, .-short_entry

/* long after_call(const long *p): *p, loaded by the instruction a call
 * returns to, a block of its own: every execution goes through int3. */
    .globl after_call
    .type after_call, @function
after_call:
    push %rbx
    mov %rdi, %rbx
    cmp $-1, %rdi
    je .Lloaded                 /* never taken: .Lloaded starts a block */
    call tiny_load
    mov (%rbx), %rdx
.Lloaded:
    mov %rdx, %rax
    pop %rbx
    ret
    .size after_call, .-after_call

/* long tiny_load(const long *p): *p; its load and return are four bytes,
 * entered by direct calls. */
    .globl tiny_load
    .type tiny_load, @function
tiny_load:
    mov (%rdi), %rax
    ret
    .size tiny_load, .-tiny_load

/* long padded_load(const long *p): *p, the same four bytes, followed by
 * padding; called through a pointer. */
    .globl padded_load
    .type padded_load, @function
padded_load:
    mov (%rdi), %rax
    ret
    .size padded_load, .-padded_load
    .p2align 4

/* long island_load(const long *p): *p, loaded by a block of its own
 * that only a short branch leads to, from a block with no room for a
 * window (after a call, and followed by a branch target). */
    .globl island_load
    .type island_load, @function
island_load:
    push %rbx
    mov %rdi, %rbx
    cmp $-1, %rdi
    je .Lil_other               /* never taken: .Lil_other starts a block */
    cmp $-2, %rdi
    je .Lil_after               /* never taken: .Lil_after starts a block */
    call no_load
    test %eax, %eax
    je .Lil_load                /* always taken */
.Lil_other:
    xor %eax, %eax
    pop %rbx
    ret
.Lil_load:
    mov (%rbx), %rax
.Lil_after:
    pop %rbx
    ret
    .fill 8, 1, 0x90            /* padding: room for a jump */
    .size island_load, .-island_load

/* long no_load(void): 0, a function after the padding. */
    .globl no_load
    .type no_load, @function
no_load:
    xor %eax, %eax
    ret
    .size no_load, .-no_load

    .section .note.GNU-stack, "", @progbits
