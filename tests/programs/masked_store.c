/* Stores that write only the lanes a mask selects (vpmaskmovd, AVX2; and
 * maskmovdqu, SSE2) into a global the fault engine traces, 64 times each
 * with every mask of a few lanes: the lanes not selected must keep their
 * bytes (the fault engine took vpmaskmovd for a store of all 32 bytes and
 * wrote its stack's bytes over the rest).  Exit status 0 when every
 * unselected byte is still 0xee and every selected one holds its value. */
#include <stdint.h>
#include <string.h>

int32_t lanes[8] __attribute__((aligned(32)));
uint8_t bytes[16] __attribute__((aligned(16)));

static int check_lanes(unsigned mask)
{
    for (int i = 0; i < 8; i++) {
        int32_t want = (mask >> i) & 1 ? 100 + i : (int32_t)0xeeeeeeee;
        if (lanes[i] != want)
            return 1;
    }
    return 0;
}

int main(void)
{
    int avx2 = __builtin_cpu_supports("avx2");
    static const int32_t values[8] = { 100, 101, 102, 103, 104, 105, 106, 107 };
    int bad = 0;
    for (unsigned m = 0; m < 64; m++) {
        unsigned mask = (m * 37u) & 0xff;
        if (avx2) {
            int32_t sel[8];
            for (int i = 0; i < 8; i++) {
                sel[i] = (mask >> i) & 1 ? -1 : 0;
                lanes[i] = (int32_t)0xeeeeeeee;
            }
            __asm__ volatile("vmovdqu %1, %%ymm1\n\t"
                             "vmovdqu %2, %%ymm0\n\t"
                             "vpmaskmovd %%ymm0, %%ymm1, %0\n\t"
                             "vzeroupper"
                             : "=m"(lanes) : "m"(sel), "m"(values) : "xmm0", "xmm1");
            bad |= check_lanes(mask);
        }
        uint8_t sel16[16], val16[16];
        for (int i = 0; i < 16; i++) {
            sel16[i] = (mask >> (i & 7)) & 1 ? 0x80 : 0;
            val16[i] = (uint8_t)i;
            bytes[i] = 0xee;
        }
        __asm__ volatile("movdqu %1, %%xmm0\n\t"
                         "movdqu %2, %%xmm1\n\t"
                         "maskmovdqu %%xmm1, %%xmm0"
                         : : "D"(bytes), "m"(val16), "m"(sel16) : "xmm0", "xmm1", "memory");
        for (int i = 0; i < 16; i++)
            bad |= bytes[i] != (sel16[i] ? (uint8_t)i : 0xee);
    }
    return bad;
}
