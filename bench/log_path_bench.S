/*
 * log_path_bench.S - the log sequences log_path_bench.c times, each in
 * the two loops it runs: a scatter of 8-byte stores to random lines (many
 * misses in flight at once) and a walk of dependent loads (one at a time).
 * Every site is one access through a trampoline-like sequence:
 *
 *   off     call a stub that returns at once (the jumps and saves alone)
 *   abi8    the stub of rewrite ABI 8: a count of the room left and the
 *           cursor, both in TLS (two stores and two loads a call)
 *   abi9    the stub of rewrite ABI 9 (src/rewrite/emit.c): the cursor
 *           alone, its low 16 bits telling a full buffer
 *   inline  no call: the trampoline writes the entry itself, the site an
 *           immediate, only rcx and rdx used (what a trampoline with its
 *           own log sequence would do; not what memtap emits)
 *
 * with none or all of rax, rcx and rdx live, and so saved around it (the
 * inline sequence leaves rax alone: it saves rcx and rdx).  A full buffer
 * starts over.
 */
    .text

stub_off:
    ret

/* The end of both stubs: the entry {eax, rdx} at the cursor in rcx;
 * label 2 is the way to a full buffer, label 1 the stub's check. */
.macro APPEND
    mov %eax, (%rcx)
    mov %rdx, 8(%rcx)
    lea 16(%rcx), %rcx
    mov %rcx, %fs:lp_cursor@tpoff
    ret
2:  call lp_full
    jmp 1b
.endm

stub_abi8:
    lea 0x1000000(%rax), %eax
1:  mov %fs:lp_room@tpoff, %rcx
    jrcxz 2f
    lea -1(%rcx), %rcx
    mov %rcx, %fs:lp_room@tpoff
    mov %fs:lp_cursor@tpoff, %rcx
    APPEND

stub_abi9:
    lea 0x1000000(%rax), %eax
1:  mov %fs:lp_cursor@tpoff, %rcx
    movzwl %cx, %ecx
    jrcxz 2f
    mov %fs:lp_cursor@tpoff, %rcx
    APPEND

/* lp_full: a full buffer starts over (no registers but rcx change) */
lp_full:
    mov lp_buffer(%rip), %rcx
    mov %rcx, %fs:lp_cursor@tpoff
    movq $4095, %fs:lp_room@tpoff
    ret

/* One site: the address EA; with saves 3, rax (unless inline), rcx and
 * rdx saved. */
.macro SITE kind, ea, saves
    lea -128(%rsp), %rsp
    .ifnc \kind, inline
    .if \saves >= 3
    push %rax
    .endif
    .endif
    .if \saves >= 2
    push %rcx
    .endif
    .if \saves >= 1
    push %rdx
    .endif
    lea \ea, %rdx
    .ifc \kind, inline
    mov %fs:lp_cursor@tpoff, %rcx
    movzwl %cx, %ecx
    jrcxz 8f
7:  mov %fs:lp_cursor@tpoff, %rcx
    movl $0x1000037, (%rcx)
    mov %rdx, 8(%rcx)
    lea 16(%rcx), %rcx
    mov %rcx, %fs:lp_cursor@tpoff
    jmp 9f
8:  call lp_full
    jmp 7b
9:
    .else
    mov $0x37, %eax
    call stub_\kind
    .endif
    .if \saves >= 1
    pop %rdx
    .endif
    .if \saves >= 2
    pop %rcx
    .endif
    .ifnc \kind, inline
    .if \saves >= 3
    pop %rax
    .endif
    .endif
    lea 128(%rsp), %rsp
.endm

/* void scatter_K_S(const unsigned *order, long n, long *cells):
 * cells[2 * order[i] + 1] = i, the store logged */
.macro SCATTER kind, saves
    .globl scatter_\kind\()_\saves
scatter_\kind\()_\saves:
    xor %r8d, %r8d
1:  mov (%rdi,%r8,4), %r9d
    shl $4, %r9
    add %rdx, %r9
    .ifnc \kind, native
    mov %rdx, %r10
    SITE \kind, 8(%r9), \saves
    mov %r10, %rdx
    .endif
    mov %r8, 8(%r9)
    inc %r8
    cmp %rsi, %r8
    jb 1b
    ret
.endm

/* long walk_K_S(const long *node, long steps): follows node[0], adding
 * node[1], the load of node[1] logged (it stands for both) */
.macro WALK kind, saves
    .globl walk_\kind\()_\saves
walk_\kind\()_\saves:
    mov %rdi, %r9
    xor %r8d, %r8d
    xor %eax, %eax
1:
    .ifnc \kind, native
    mov %rax, %r10
    SITE \kind, 8(%r9), \saves
    mov %r10, %rax
    .endif
    add 8(%r9), %rax
    mov (%r9), %r9
    dec %rsi
    jne 1b
    ret
.endm

SCATTER native, 0
WALK native, 0
.irp kind, off, abi8, abi9, inline
.irp saves, 0, 3
SCATTER \kind, \saves
WALK \kind, \saves
.endr
.endr

    .section .note.GNU-stack,"",@progbits
