/* A buffer grown by realloc while it is being filled. */
#include <stdlib.h>

int main(void)
{
    int cap = 4, n = 0;
    int *v = malloc((size_t)cap * sizeof *v);
    for (int i = 0; i < 3000; i++) {
        if (n == cap) {
            cap *= 2;
            int *w = realloc(v, (size_t)cap * sizeof *v);
            if (!w)
                return 1;
            v = w;
        }
        v[n++] = i;
    }
    long sum = 0;
    for (int i = 0; i < n; i++)
        sum += v[i];
    free(v);
    return sum != 4498500;
}
