/*
 * lk_hazards_asm.S - code a rewriter that trusts its control-flow graph
 * breaks (see lk_hazards.c): a cold piece outside every symbol, reached
 * only by a computed jump, that jumps straight into the middle of a hot
 * pair of short instructions; a relative jump table whose base reaches
 * the jump through another register and whose cases fall into each
 * other; a table kept in .text that decodes as stores and loads; and
 * loads followed by instructions no analysis can see entered, under the
 * bytes a jump over the load would take.
 */
    .text
/* long hot_cold(long *p, long n): n rounds of p[0] += 1 (skipped every
 * fourth round) and sum += p[1]; every fourth round leaves through a
 * computed jump for a cold piece, which adds 2 to p[2] and comes back
 * between the two loads.  Returns the sum. */
    .globl hot_cold
    .type hot_cold, @function
hot_cold:
    xor %eax, %eax
    xor %ecx, %ecx
.Lhc_loop:
    addq $1, (%rdi)             /* 4 bytes: a window would take the next */
.Lhc_mid:
    mov 8(%rdi), %rdx           /* entered from the cold piece too */
    add %rdx, %rax
    inc %rcx
    cmp %rsi, %rcx
    jae .Lhc_done
    test $3, %cl
    jnz .Lhc_loop
    lea .Lcold-64(%rip), %r8    /* a computed jump: no table shows it */
    add $64, %r8
    jmp *%r8
.Lhc_done:
    ret
    .size hot_cold, .-hot_cold
    .p2align 4
.Lcold:                         /* no symbol, as GCC's cold partitions */
    addq $2, 16(%rdi)
    jmp .Lhc_mid
    .p2align 4
/* long dispatch(const long *p, long op): p[op] + ... + p[3] for op in
 * 0..3, through a jump table whose base moves to another register. */
    .globl dispatch
    .type dispatch, @function
dispatch:
    xor %eax, %eax
    lea .Ltable(%rip), %rdx
    mov %rdx, %r9
    and $3, %rsi
    movslq (%r9,%rsi,4), %rcx
    add %r9, %rcx
    jmp *%rcx
.Lcase0:
    add (%rdi), %rax            /* 3 bytes: falls into case 1 */
.Lcase1:
    add 8(%rdi), %rax
.Lcase2:
    add 16(%rdi), %rax
.Lcase3:
    add 24(%rdi), %rax
    ret
    .size dispatch, .-dispatch
    .section .rodata
    .p2align 2
.Ltable:
    .long .Lcase0-.Ltable, .Lcase1-.Ltable, .Lcase2-.Ltable, .Lcase3-.Ltable
    .text
    .p2align 4
/* long text_table_sum(void): the sum of the bytes of a table kept in
 * .text after the code, bytes that decode as stores and loads. */
    .globl text_table_sum
    .type text_table_sum, @function
text_table_sum:
    lea .Ltt(%rip), %rdx
    xor %eax, %eax
    xor %ecx, %ecx
1:  movzbl (%rdx,%rcx), %r8d
    add %r8, %rax
    inc %rcx
    cmp $(.Ltt_end - .Ltt), %rcx
    jb 1b
    ret
.Ltt:   /* mov %rax,(%rdi); mov (%rsi),%rcx; mov %rax,8(%rdi); ret */
    .byte 0x48, 0x89, 0x07, 0x48, 0x8b, 0x0e, 0x48, 0x89, 0x47, 0x08, 0xc3
.Ltt_end:
    .size text_table_sum, .-text_table_sum
/* long hidden_entries(long *p, long n): n rounds of three loads, p[0]
 * (2 bytes), p[1] (3 bytes) and p[2] (4 bytes), each added up by the
 * instruction after it, which lies under the bytes of a jump over the
 * load (or, after the 4-byte one, under its last byte).  Rounds 1, 2 and
 * 3 of every 4 come back through a jump to one of those instructions,
 * past its load, at a distance from the function's start kept as data:
 * nothing a static analysis reads says code is entered there.  Returns
 * the sum. */
    .globl hidden_entries
    .type hidden_entries, @function
hidden_entries:
    push %rbx
    xor %eax, %eax
    xor %ecx, %ecx
    xor %edx, %edx
.Lhe_loop:
    mov (%rdi), %edx            /* 2 bytes */
.Lhe_a:
    add %rdx, %rax
    mov 8(%rdi), %edx           /* 3 bytes */
.Lhe_b:
    add %rdx, %rax
    mov 16(%rdi), %rdx          /* 4 bytes */
.Lhe_c:
    add %rdx, %rax
    inc %rcx
    cmp %rsi, %rcx
    jae .Lhe_done
    mov %rcx, %rbx
    and $3, %ebx
    jz .Lhe_loop
    lea .Lhe_from(%rip), %r8
    mov -8(%r8,%rbx,8), %r8     /* the distance for round 1, 2 or 3 */
    lea hidden_entries(%rip), %r9
    add %r9, %r8
    jmp *%r8
.Lhe_done:
    pop %rbx
    ret
    .size hidden_entries, .-hidden_entries
    .section .rodata
    .p2align 3
.Lhe_from:
    .quad .Lhe_a - hidden_entries, .Lhe_b - hidden_entries, .Lhe_c - hidden_entries
    .section .note.GNU-stack, "", @progbits
