/* 100 records of one allocation site, 32 bytes each: `hot` is read 10
 * times a record in the loop and written once, `warm` read once, `cold`
 * written once when the record is made, `never` (16 bytes) not touched:
 * the field map of `memtap report` (it.report_fields counts by hand). */
#include <stdio.h>
#include <stdlib.h>

struct record {
    long hot;          /* +0, 8 bytes */
    int warm;          /* +8, 4 bytes */
    int cold;          /* +12, 4 bytes */
    char never[16];    /* +16, 16 bytes */
};

int main(void)
{
    struct record *r[100];
    for (int i = 0; i < 100; i++) {
        r[i] = malloc(sizeof *r[i]);
        if (!r[i])
            return 1;
        r[i]->hot = i;
        r[i]->cold = 7;
    }
    long sum = 0;
    for (int round = 0; round < 10; round++)
        for (int i = 0; i < 100; i++)
            sum += ((volatile struct record *)r[i])->hot;
    for (int i = 0; i < 100; i++)
        sum += ((volatile struct record *)r[i])->warm;
    printf("%ld\n", sum);
    return 0;
}
