/* Instructions the fault engine must handle: rep movs/stos, an atomic
 * read-modify-write, cmpxchg, an access straddling two pages, a push of a
 * memory operand, and a vector load. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

__attribute__((aligned(4096))) unsigned char pages[2 * 4096];
long counter;
long expected_value = 5;
unsigned char src[300], dst[300];

int main(void)
{
    for (int i = 0; i < 300; i++)
        src[i] = (unsigned char)i;
    /* rep movsb: 300 bytes from src to dst */
    void *d = dst;
    const void *s = src;
    size_t n = 300;
    __asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
    /* rep stosb: 100 bytes of 0x5a into pages */
    d = pages;
    n = 100;
    __asm__ volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(0x5a) : "memory");
    /* atomic increment and compare-and-swap on a global */
    __atomic_fetch_add(&counter, 5, __ATOMIC_SEQ_CST);
    long want = expected_value;
    __atomic_compare_exchange_n(&counter, &want, 9, 0, __ATOMIC_SEQ_CST,
                                __ATOMIC_SEQ_CST);
    /* an 8-byte store and load straddling the two pages */
    uint64_t v = 0x1122334455667788ull;
    memcpy(pages + 4092, &v, 0); /* keep pages used by the C library too */
    *(volatile uint64_t *)(void *)(pages + 4092) = v;
    uint64_t back = *(volatile uint64_t *)(void *)(pages + 4092);
    /* push of a memory operand (a load from a global) */
    long popped;
    __asm__ volatile("push %1\n\tpop %0" : "=r"(popped) : "m"(counter));
    int ok = memcmp(src, dst, 300) == 0 && pages[99] == 0x5a &&
             pages[100] == 0 && counter == 9 && back == v && popped == 9;
    return ok ? 0 : 1;
}
