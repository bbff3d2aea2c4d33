/* A heap array filled and summed through a pointer. */
#include <stdlib.h>

int main(void)
{
    int *a = malloc(1000 * sizeof *a);
    if (!a)
        return 1;
    for (int i = 0; i < 1000; i++)
        a[i] = i * 3;
    long sum = 0;
    for (int i = 0; i < 1000; i += 3)
        sum += a[i];
    a[999] += (int)sum;     /* a read-modify-write */
    free(a);
    return sum == 0;
}
