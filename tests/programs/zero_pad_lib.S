/*
 * zero_pad_lib.S - a library laid out as libLLVM-14's code is: functions
 * padded with odd runs of zero bytes, one ending in a call that never
 * returns, and a constructor that only .init_array names.  Linked with
 * -s: no .symtab, so `checked` and `ctor` are known by their unwind
 * entries alone; and more such functions than the analysis kept room for
 * the gaps between them (the code after them went unanalysed, its
 * accesses untraced).  lib_counter() returns 1 + the constructor's 41.
 */
    .text
    .globl lib_zero
    .type lib_zero, @function
    .p2align 4
lib_zero:
    .cfi_startproc
    mov counter(%rip), %eax
    ret
    .cfi_endproc
    .size lib_zero, .-lib_zero
    .skip 11, 0

/* abort()s on a non-null argument */
    .type checked, @function
checked:
    .cfi_startproc
    push %rbx
    .cfi_def_cfa_offset 16
    mov %rdi, %rbx
    test %rdi, %rdi
    jne 1f
    pop %rbx
    .cfi_def_cfa_offset 8
    ret
1:
    .cfi_def_cfa_offset 16
    call abort@PLT
    .cfi_endproc
    .size checked, .-checked
    .skip 11, 0

    .type ctor, @function
ctor:
    .cfi_startproc
    push %rbx
    .cfi_def_cfa_offset 16
    sub $0x30, %rsp
    .cfi_def_cfa_offset 64
    xor %edi, %edi
    call checked
    lea counter(%rip), %rbx
    addl $41, (%rbx)
    add $0x30, %rsp
    .cfi_def_cfa_offset 16
    pop %rbx
    .cfi_def_cfa_offset 8
    ret
    .cfi_endproc
    .size ctor, .-ctor

/* 96 functions known by their unwind entries alone, each followed by
 * padding: a stretch of code outside every function (a gap) after each */
    .rept 96
    .cfi_startproc
    mov counter(%rip), %eax
    ret
    .cfi_endproc
    .p2align 4
    .endr

    .globl lib_counter
    .type lib_counter, @function
lib_counter:
    .cfi_startproc
    sub $8, %rsp
    .cfi_def_cfa_offset 16
    call tail_code
    add $8, %rsp
    .cfi_def_cfa_offset 8
    mov counter(%rip), %eax
    ret
    .cfi_endproc
    .size lib_counter, .-lib_counter

/* code no symbol or unwind entry names, last in .text: found by the gap
 * scan alone; stores 7 to tail_mark */
tail_code:
    movl $7, tail_mark(%rip)
    ret

    .section .init_array,"aw"
    .p2align 3
    .quad ctor

    .data
    .p2align 3
counter:
    .long 1
tail_mark:
    .long 0

    .section .note.GNU-stack,"",@progbits
