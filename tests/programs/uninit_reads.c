/* uninit_reads.c - heap reads before any write, for `memtap uninit`.  Each
 * line that must be reported carries a REPORT marker with the number of
 * times it reads never-written bytes; the other reads are of written,
 * zeroed, copied-from-written or set bytes and must not be reported.
 * Built at -O0 so that each marked line is one load.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int read_at(volatile int *p) { return *p; } /* REPORT once-only 1 */

int main(void)
{
    int sum = 0;
    volatile int *fresh = malloc(16 * sizeof(int));
    fresh[0] = 1;
    sum += fresh[0];
    sum += fresh[1]; /* REPORT 1 */
    for (int i = 0; i < 3; i++)
        sum += fresh[2 + i]; /* REPORT 3 */

    volatile int *zeroed = calloc(8, sizeof(int));
    sum += zeroed[3];

    volatile int *set = malloc(8 * sizeof(int));
    memset((void *)set, 0, 8 * sizeof(int));
    sum += set[5];

    volatile int *copy = malloc(16 * sizeof(int));
    memcpy((void *)copy, (const void *)fresh, 16 * sizeof(int));
    sum += copy[0];
    sum += copy[9]; /* REPORT 1 */

    volatile int *grown = malloc(2 * sizeof(int));
    grown[0] = grown[1] = 4;
    grown = realloc((void *)grown, 64 * sizeof(int));
    sum += grown[1];
    sum += grown[40]; /* REPORT 1 */

    /* the same instruction first reads a written int, then an unwritten
     * one: reported unless checks stop once an instruction passed */
    sum += read_at(fresh);
    sum += read_at(fresh + 12);

    free((void *)fresh);
    free((void *)zeroed);
    free((void *)set);
    free((void *)copy);
    free((void *)grown);
    printf("%d\n", sum != 12345);
    return 0;
}
