/* Prints what zero_pad_lib's constructor left: 1 + 41 = 42. */
#include <stdio.h>

int lib_counter(void);

int main(void)
{
    printf("%d\n", lib_counter());
    return 0;
}
