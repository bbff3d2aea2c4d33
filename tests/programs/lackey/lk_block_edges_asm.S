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
 * instrument: every execution goes through int3. */
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

/* long tiny_load(const long *p): *p; its load and return are four bytes,
 * entered by direct calls. */
    .globl tiny_load
    .type tiny_load, @function
tiny_load:
    mov (%rdi), %rax
    ret
    .size tiny_load, .-tiny_load

    .section .note.GNU-stack, "", @progbits
