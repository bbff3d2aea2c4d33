/* Prints nodeps_mid's sum of nodeps_lib's table: 241. */
#include <stdio.h>

int nodeps_sum(void);

int main(void)
{
    printf("%d\n", nodeps_sum());
    return 0;
}
