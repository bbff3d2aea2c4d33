/* Writes a 128 KiB static array line by line, twice (one int per 64-byte
 * line: 2048 lines), then reads a 64 KiB one once.  Built -O2: nothing
 * else touches memory in between.  Every write-back can be counted by
 * hand for a 32 KiB 8-way first level and a 64 KiB 16-way last level,
 * both of 64 sets of 64-byte lines, LRU, write-allocate, write-back: each
 * set sees 32 of `written`'s lines a pass, so every access misses both
 * levels;
 *   first level: the 9th line of a set evicts the 1st, dirty, and so on;
 *     the reads of `clean` (16 lines a set) evict the last 8: each of the
 *     2 x 2048 writes' lines leaves dirty once, 4096 write-backs;
 *   last level: a line written back is still there (it left the first
 *     level 8 misses after its use, the last keeps 16), and leaves 8
 *     misses later, dirty; `clean` pushes out the last 16 of the set: 4096
 *     write-backs to memory.  A 1 MiB last level keeps every line: none.
 */
#include <stdio.h>

#define LINE 64
static volatile int written[131072 / sizeof(int)] __attribute__((aligned(LINE)));
static volatile int clean[65536 / sizeof(int)] __attribute__((aligned(LINE)));

int main(void)
{
    for (int pass = 0; pass < 2; pass++)
        for (unsigned i = 0; i < sizeof written / sizeof *written; i += LINE / sizeof(int))
            written[i] = pass;
    long sum = 0;
    for (unsigned i = 0; i < sizeof clean / sizeof *clean; i += LINE / sizeof(int))
        sum += clean[i];
    printf("%ld\n", sum);
    return 0;
}
