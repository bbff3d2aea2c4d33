/*
 * lk_live_edges_asm.S - functions whose rax, rcx and rdx are needed, or
 * not, only in blocks after a branch (see lk_live_edges.c).  Each comment
 * gives what is live on entry among rax, rcx and rdx, worked out by hand;
 * at a call, a return and an indirect jump all three count as live.
 */
    .text

/* long after_branch(const long *p, long n, long c, long d): *p + d + c
 * when *p is not 0, else 0.  After the load c (rdx) and d (rcx) are read
 * only where the branch leads; the way on falls into a block that writes
 * both.  On entry: rcx, rdx (rax is loaded before anything reads it). */
    .globl after_branch
    .type after_branch, @function
after_branch:
    mov (%rdi), %rax
    test %rax, %rax
    jne 1f
    xor %ecx, %ecx
    xor %edx, %edx
    ret
1:  lea (%rax,%rcx), %rax
    add %rdx, %rax
    ret
    .size after_branch, .-after_branch

/* long loop_sum(const long *p, long n, long c, long d): p[0] + ... +
 * p[n-1] + n * d, n > 0.  rax and rdx are written before they are read
 * on every way from the entry (rdx by a zeroing idiom); after the load, d
 * (rcx) is read only by the loop's next round.  On entry: rcx. */
    .globl loop_sum
    .type loop_sum, @function
loop_sum:
    xor %edx, %edx
    xor %r8d, %r8d
1:  add %rcx, %r8
    mov (%rdi,%rdx,8), %rax
    add %rax, %r8
    inc %rdx
    cmp %rsi, %rdx
    jne 1b
    xor %ecx, %ecx
    mov %r8, %rax
    ret
    .size loop_sum, .-loop_sum

/* long jump_back(const long *p, long n, long c, long d): *p + d.  After
 * the load, d (rcx) is read only where a jump back leads.  On entry: rcx,
 * rdx (all live at that block's return, rax loaded first). */
    .globl jump_back
    .type jump_back, @function
jump_back:
    jmp 2f
1:  add %rcx, %rax
    ret
2:  mov (%rdi), %rax
    jmp 1b
    .size jump_back, .-jump_back

/* long tail(const long *p, long n, long c, long d): after_branch, by a
 * jump.  On entry: what after_branch needs, rcx and rdx. */
    .globl tail
    .type tail, @function
tail:
    jmp after_branch
    .size tail, .-tail

/* long before_call(const long *p, long n, long c, long d): *p + 1, with
 * eax set before a call.  On entry: rcx and rdx (all live at the call,
 * but rax written before it). */
    .globl before_call
    .type before_call, @function
before_call:
    push %rbx
    mov %rdi, %rbx
    xor %eax, %eax
    call no_op
    mov (%rbx), %rax
    inc %rax
    pop %rbx
    ret
    .size before_call, .-before_call

    .globl no_op
    .type no_op, @function
no_op:
    ret
    .size no_op, .-no_op

/* long through_pointer(const long *p, long (*f)(const long *)): f(p),
 * by an indirect jump.  On entry: all three. */
    .globl through_pointer
    .type through_pointer, @function
through_pointer:
    jmp *%rsi
    .size through_pointer, .-through_pointer

/* long falls_in(const long *p, long n, long c, long d): *p + n * c,
 * n > 0.  The load's block falls into a loop's head, which reads rax and
 * c (rdx); rcx is written before the return.  On entry: rdx. */
    .globl falls_in
    .type falls_in, @function
falls_in:
    mov (%rdi), %rax
1:  add %rdx, %rax
    dec %rsi
    jne 1b
    xor %ecx, %ecx
    ret
    .size falls_in, .-falls_in

    .section .note.GNU-stack,"",@progbits
