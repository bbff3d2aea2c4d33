/* Two phases of stores a pause apart: N stores into `first` (argv[1],
 * default 300,000), then 300 ms asleep, then N into `second`.  In time,
 * the middle of the run holds no accesses; in event order it would hold
 * its share of both phases. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define SLOTS 65536
static volatile int first[SLOTS], second[SLOTS];

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 300000;
    for (long i = 0; i < n; i++)
        first[i % SLOTS] = (int)i;
    struct timespec pause = { 0, 300 * 1000 * 1000 };
    nanosleep(&pause, NULL);
    for (long i = 0; i < n; i++)
        second[i % SLOTS] = (int)i;
    printf("%d\n", first[1] + second[1]);
    return 0;
}
