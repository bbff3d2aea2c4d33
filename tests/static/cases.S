/*
 * cases.S - instruction sequences whose analysis is derived by hand in
 * test_select.c: the 18-instruction example of the selective
 * instrumentation slides (one basic block), stability cases (two loads of
 * one expression around a single instruction), and unusual instructions.
 */
        .text

        .globl slides_example
        .type slides_example, @function
slides_example:
        mov -0x4(%rbp),%edx             /*  1 */
        mov -0x8(%rbp),%eax             /*  2 */
        mov -0x18(%rbp),%rax            /*  3 */
        mov -0x4(%rbp),%edx             /*  4 */
        mov -0x8(%rbp),%eax             /*  5 */
        mov -0x18(%rbp),%rax            /*  6 */
        mov (%rax),%esi                 /*  7 */
        mov -0x4(%rbp),%edx             /*  8 */
        mov -0xc(%rbp),%eax             /*  9 */
        mov 0x601120(,%rax,4),%edi      /* 10 */
        mov -0xc(%rbp),%edx             /* 11 */
        mov -0x8(%rbp),%eax             /* 12 */
        mov 0x601060(,%rax,4),%eax      /* 13 */
        mov -0x4(%rbp),%edx             /* 14 */
        mov -0x8(%rbp),%eax             /* 15 */
        mov -0x18(%rbp),%rax            /* 16 */
        mov -0x4(%rbp),%edx             /* 17 */
        mov (%rax),%esi                 /* 18 */
        ret
        .size slides_example, .-slides_example

/* stab_<case>_<same|diff> REG, INSN...: load (REG), run INSN, load (REG);
 * "diff" when INSN writes REG (a new incarnation), "same" when not. */
        .macro stab name, reg, insn:vararg
        .globl stab_\name
        .type stab_\name, @function
stab_\name:
        mov (\reg),%r8
        \insn
        mov (\reg),%r9
        ret
        .size stab_\name, .-stab_\name
        .endm

        stab partial8_diff, %rax, mov %bl,%al
        stab partial16_diff, %rax, mov %bx,%ax
        stab zeroext32_diff, %rax, mov %ebx,%eax
        stab lea_diff, %rax, lea 8(%rax),%rax
        stab cmov_diff, %rax, cmovz %rbx,%rax
        stab xchg_diff, %rbx, xchg %rbx,%rcx
        stab cmpxchg_diff, %rax, cmpxchg %rcx,(%rdx)
        stab cpuid_diff, %rbx, cpuid
        stab repmovs_diff, %rdi, rep movsb
        stab div_diff, %rdx, div %rcx
        stab pop_diff, %rax, pop %rax
        stab push_rsp_diff, %rsp, push %rax
        stab syscall_diff, %r11, syscall
        stab setcc_diff, %rax, sete %al
        stab inc_diff, %rax, inc %rax
        stab xadd_diff, %rbx, xadd %rbx,(%rcx)
        stab other_reg_same, %rax, mov %rbx,%rcx
        stab push_same, %rax, push %rax
        stab store_same, %rax, mov %rcx,(%rax)
        stab cmp_same, %rax, cmp %rbx,%rax
        stab read_r8_same, %rax, add (%rax),%r10

/* Unusual instructions: two gathers (AVX2 and AVX-512), an AVX-512 load,
 * a prefetch, a movs (implicit string operands), a push (implicit stack
 * operand) of an explicit memory operand. */
        .globl unusual
        .type unusual, @function
unusual:
        vpgatherdd %xmm2,(%rax,%xmm1,4),%xmm0
        vpgatherdd (%rax,%zmm1,4),%zmm0{%k1}
        vmovdqu64 (%rax),%zmm0
        prefetcht0 (%rax)
        movsb
        pushq 8(%rax)
        mov %fs:0x28,%rax
        ret
        .size unusual, .-unusual
