/* Instruction forms with a memory operand in traced memory (a heap block,
 * a global), each printing what it left in registers, flags and memory:
 * the fault engine's output must equal the native run's whichever way it
 * completes them (in its handler, or stepped under the trap flag).  Forms
 * the handler does not run (push, div) are here too, and an indirect call
 * through a pointer on the heap (taken in the handler).  An argument N runs
 * them N times (a patched site's trampoline runs the later rounds). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

long global_counter = 40;

static void show(const char *form, uint64_t a, uint64_t b)
{
    printf("%-12s %016llx %016llx\n", form, (unsigned long long)a,
           (unsigned long long)b);
}

static long seven(void) { return 7; }

static void integer_forms(uint64_t *p)
{
    uint64_t r = 0, f = 0;
    p[0] = 0xfffffffffffffff0ull;
    __asm__ volatile("addq %2, (%1)\n\tsetc %b0" : "=&q"(f) : "r"(p), "r"(0x20ull) : "cc", "memory");
    show("add", p[0], f & 1);
    p[1] = 3;
    __asm__ volatile("xor %0, %0\n\tcmpl $5, 8(%1)\n\tsetl %b0" : "=&q"(f) : "r"(p) : "cc", "memory");
    show("cmp", p[1], f & 1);
    r = 10;
    __asm__ volatile("lock xaddq %0, 8(%1)" : "+r"(r) : "r"(p) : "cc", "memory");
    show("xadd", p[1], r);
    r = 13;
    __asm__ volatile("xor %%edx, %%edx\n\tlock cmpxchgq %2, 8(%1)\n\tsete %%dl\n\tmov %%rdx, %%rcx"
                     : "+a"(r) : "r"(p), "r"(99ull) : "rcx", "rdx", "cc", "memory");
    show("cmpxchg", p[1], r);
    p[2] = 0x8;
    __asm__ volatile("xor %0, %0\n\tbtq $3, 16(%1)\n\tsetc %b0\n\tbtsq $7, 16(%1)" : "=&q"(f) : "r"(p) : "cc", "memory");
    show("bt", p[2], f & 1);
    p[3] = 5;
    __asm__ volatile("negq 24(%0)\n\tnotl 24(%0)" : : "r"(p) : "cc", "memory");
    show("neg-not", p[3], 0);
    p[4] = 3;
    __asm__ volatile("shlq %%cl, 32(%0)" : : "r"(p), "c"(5) : "cc", "memory");
    show("shl-cl", p[4], 0);
    r = 6;
    __asm__ volatile("imulq 32(%1), %0" : "+r"(r) : "r"(p) : "cc", "memory");
    show("imul", r, 0);
    p[5] = 0x80ff;
    uint64_t z, s;
    __asm__ volatile("movzbl 40(%2), %k0\n\tmovsbq 40(%2), %1" : "=&r"(z), "=&r"(s) : "r"(p) : "memory");
    show("movzx-movsx", z, s);
    r = 0x1111;
    __asm__ volatile("movb 41(%1), %%ah" : "+a"(r) : "r"(p) : "memory");
    show("mov-ah", r, 0);
    r = 1;
    __asm__ volatile("cmpq $0, %2\n\tcmovgq 40(%1), %0" : "+r"(r) : "r"(p), "r"(2ull) : "cc", "memory");
    show("cmov", r, 0);
    p[6] = 0;
    __asm__ volatile("cmpq $1, %1\n\tsetne 48(%0)" : : "r"(p), "r"(2ull) : "cc", "memory");
    show("setcc", p[6], 0);
    r = 0x77;
    __asm__ volatile("xchgq %0, 48(%1)" : "+r"(r) : "r"(p) : "memory");
    show("xchg", p[6], r);
    p[7] = p[8] = 0;
    __asm__ volatile("incq 56(%0,%1,8)" : : "r"(p), "r"(1ull) : "cc", "memory");
    show("inc-index", p[8], 0);
    p[9] = 0x100000000ull;
    uint64_t lo = 0x300000000ull, hi;
    __asm__ volatile("mulq 72(%2)" : "+a"(lo), "=d"(hi) : "r"(p) : "cc", "memory");
    show("mul", lo, hi);
    global_counter += 2;
    __asm__ volatile("addl $3, global_counter(%%rip)" : : : "cc", "memory");
    show("rip-global", (uint64_t)global_counter, 0);
}

/* EVEX forms (as glibc's string functions use them): a 64-byte load, a
 * byte compare against memory into a mask register, a masked store. */
__attribute__((target("avx512bw"))) static void evex_forms(unsigned char *b)
{
    for (int i = 0; i < 64; i++)
        b[i] = (unsigned char)(i * 7);
    uint64_t equal;
    __asm__ volatile("vmovdqu64 (%1), %%zmm17\n\t"
                     "vpcmpb $0, (%1), %%zmm17, %%k1\n\t"
                     "kmovq %%k1, %0\n\t"
                     "movabsq $0x5555555555555555, %%rax\n\t"
                     "kmovq %%rax, %%k2\n\t"
                     "vpaddb %%zmm17, %%zmm17, %%zmm18\n\t"
                     "vmovdqu8 %%zmm18, (%1)%{%%k2%}\n\t"
                     "vzeroupper"
                     : "=&r"(equal) : "r"(b)
                     : "rax", "k1", "k2", "xmm17", "xmm18", "memory");
    uint64_t sum = 0;
    for (int i = 0; i < 64; i++)
        sum = sum * 31 + b[i];
    show("evex", equal, sum);
}

static void vector_forms(double *d)
{
    uint64_t bits[2];
    d[0] = 1.5;
    d[1] = -2.25;
    d[2] = 10.0;
    d[3] = 0.125;
    __asm__ volatile("movapd (%0), %%xmm0\n\taddpd 16(%0), %%xmm0\n\tmovupd %%xmm0, 32(%0)"
                     : : "r"(d) : "xmm0", "memory");
    memcpy(bits, &d[4], sizeof bits);
    show("sse-addpd", bits[0], bits[1]);
    long n = 12345;
    memcpy(&d[6], &n, sizeof n);
    __asm__ volatile("cvtsi2sdq 48(%0), %%xmm1\n\tmovsd %%xmm1, 56(%0)" : : "r"(d) : "xmm1", "memory");
    memcpy(bits, &d[7], sizeof bits[0]);
    show("cvtsi2sd", bits[0], 0);
    __asm__ volatile("fldl (%0)\n\tfaddl 16(%0)\n\tfstpl 64(%0)" : : "r"(d) : "memory");
    memcpy(bits, &d[8], sizeof bits[0]);
    show("x87", bits[0], 0);
    if (__builtin_cpu_supports("avx2")) {
        int *v = (int *)(void *)&d[16];
        for (int i = 0; i < 16; i++)
            v[i] = i * 3 + 1;
        __asm__ volatile("vmovdqu (%0), %%ymm0\n\tvpaddd 32(%0), %%ymm0, %%ymm1\n\t"
                         "vmovdqu %%ymm1, 64(%0)\n\tvzeroupper"
                         : : "r"(v) : "xmm0", "xmm1", "memory");
        uint64_t sum = 0;
        for (int i = 16; i < 24; i++)
            sum = sum * 131 + (uint64_t)v[i];
        show("avx2-vpaddd", sum, 0);
    } else {
        show("avx2-vpaddd", 0, 0);
    }
    uint64_t upper[4] = { 0, 0, 0, 0 };
    if (__builtin_cpu_supports("avx512f")) {
        /* a VEX load into ymm0 clears the upper half of zmm0 */
        __asm__ volatile("vpternlogd $0xff, %%zmm0, %%zmm0, %%zmm0\n\t"
                         "vmovdqu (%1), %%ymm0\n\t"
                         "vextracti64x4 $1, %%zmm0, (%0)\n\tvzeroupper"
                         : : "r"(upper), "r"(d) : "xmm0", "memory");
    }
    show("vex-upper", upper[0] | upper[1], upper[2] | upper[3]);
    if (__builtin_cpu_supports("avx512bw"))
        evex_forms((unsigned char *)(void *)&d[24]);
    else
        show("evex", 0, 0);
}

static void stepped_forms(uint64_t *p)
{
    p[10] = 0x1234;
    uint64_t popped;
    __asm__ volatile("pushq 80(%1)\n\tpopq %0" : "=r"(popped) : "r"(p) : "memory");
    show("push", popped, 0);
    p[11] = 7;
    uint64_t q = 100, rem = 0;
    __asm__ volatile("divq 88(%2)" : "+a"(q), "+d"(rem) : "r"(p) : "cc", "memory");
    show("div", q, rem);
    long (*fn[1])(void) = { seven };
    long (**heap_fn)(void) = malloc(sizeof fn);
    memcpy(heap_fn, fn, sizeof fn);
    long got;
    __asm__ volatile("call *(%1)" : "=a"(got) : "r"(heap_fn)
                     : "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "memory", "cc");
    show("call-mem", (uint64_t)got, 0);
    free(heap_fn);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 1;
    uint64_t *p = aligned_alloc(64, 256);
    double *d = aligned_alloc(64, 256);
    if (!p || !d)
        return 1;
    for (int i = 0; i < rounds; i++) {
        integer_forms(p);
        vector_forms(d);
        stepped_forms(p);
    }
    free(d);
    free(p);
    return 0;
}
