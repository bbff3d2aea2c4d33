/* Prints what init_lib's initializer left: 3 * (0 + ... + 31) = 1488. */
#include <stdio.h>

int init_sum(void);

int main(void)
{
    printf("%d\n", init_sum());
    return 0;
}
