/* Prints its arguments, one a line, and stores to a heap block of its
 * own: the program a test script names as its interpreter ("#!"). */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    volatile int *block = malloc(10 * sizeof *block);
    if (!block)
        return 1;
    for (int i = 0; i < 10; i++)
        block[i] = i;
    for (int i = 0; i < argc; i++)
        printf("argv[%d] = %s\n", i, argv[i]);
    free((void *)block);
    return 0;
}
