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
 *           immediate and the cursor's TLS offset in its instructions
 *           (what patching each trampoline at start-up would give)
 *   abi10   rewrite ABI 10 (src/rewrite/emit.c): as inline, but the TLS
 *           offset and the tag loaded from slots by rip
 *
 * with none or all of rax, rcx and rdx live, and so saved around it (the
 * inline sequences leave rax alone: they save rcx and rdx).  A full buffer
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

/* One site: the address EA; with saves 3, rax (for a stub's call), rcx
 * and rdx saved.  The inline sequences move rsp only to save registers
 * or to call lp_full, as memtap's trampolines do. */
.macro SITE kind, ea, saves
    inline = 0
    .ifc \kind, inline
    inline = 1
    .endif
    .ifc \kind, abi10
    inline = 1
    .endif
    frame = !inline || \saves > 0
    .if frame
    lea -128(%rsp), %rsp
    .endif
    .if \saves >= 3 && !inline
    push %rax
    .endif
    .if \saves >= 2
    push %rcx
    .endif
    .if \saves >= 1
    push %rdx
    .endif
    lea \ea, %rdx
    .ifc \kind, abi10
8:  mov lp_tlsoff(%rip), %rcx
    jrcxz 9f
    movzwl %fs:(%rcx), %ecx
    jrcxz 7f
    mov lp_tlsoff(%rip), %rcx
    mov %fs:(%rcx), %rcx
    mov %rdx, 8(%rcx)
    mov lp_tag(%rip), %edx
    lea 0x37(%rdx), %edx
    mov %edx, (%rcx)
    mov lp_tlsoff(%rip), %rdx
    lea 16(%rcx), %rcx
    mov %rcx, %fs:(%rdx)
    jmp 9f
    .endif
    .ifc \kind, inline
8:  mov %fs:lp_cursor@tpoff, %rcx
    movzwl %cx, %ecx
    jrcxz 7f
    mov %fs:lp_cursor@tpoff, %rcx
    movl $0x1000037, (%rcx)
    mov %rdx, 8(%rcx)
    lea 16(%rcx), %rcx
    mov %rcx, %fs:lp_cursor@tpoff
    jmp 9f
    .endif
    .if inline
7:  lea -128(%rsp), %rsp
    call lp_full
    lea 128(%rsp), %rsp
    jmp 8b
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
    .if \saves >= 3 && !inline
    pop %rax
    .endif
    .if frame
    lea 128(%rsp), %rsp
    .endif
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
.irp kind, off, abi8, abi9, inline, abi10
.irp saves, 0, 3
SCATTER \kind, \saves
WALK \kind, \saves
.endr
.endr

    .data
    .globl lp_tlsoff, lp_tag
lp_tlsoff:
    .quad 0
lp_tag:
    .long 0x1000000

    .section .note.GNU-stack,"",@progbits
