/* rep movs whose source and destination overlap by less than an element:
 * each element is read whole before it is written, so a copy of 8-byte
 * elements 4 bytes forward repeats the first half of every element read
 * (the fault engine copied byte by byte, reading bytes it had just
 * written).  Exit status 0 when the buffer holds what the instruction's
 * definition gives, worked out by hand below. */
#include <stddef.h>

unsigned char buf[32];

int main(void)
{
    for (int i = 0; i < 32; i++)
        buf[i] = (unsigned char)i;
    /* two quadwords from buf to buf + 4: element 0 reads bytes 0-7 and
     * writes them at 4-11; element 1 reads bytes 8-15 (8-11 now hold
     * 4-7) and writes them at 12-19 */
    void *d = buf + 4;
    const void *s = buf;
    size_t n = 2;
    __asm__ volatile("rep movsq" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
    static const unsigned char want[20] = { 0, 1, 2, 3, 0, 1, 2, 3, 4, 5,
                                            6, 7, 4, 5, 6, 7, 12, 13, 14, 15 };
    for (int i = 0; i < 20; i++)
        if (buf[i] != want[i])
            return 1;
    for (int i = 20; i < 32; i++)
        if (buf[i] != i)
            return 1;
    return 0;
}
