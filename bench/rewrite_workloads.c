/* rewrite_workloads.c - workloads for bench/rewrite.py: a memory-bound
 * sweep over a 16 MiB array, a CPU-bound Mandelbrot set, and qsort of a
 * quarter million integers (calls through a function pointer).  Each prints a
 * checksum, so rewritten copies can be checked against the original. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long sweep(void)
{
    enum { N = 4 << 20, PASSES = 16 };
    int *a = malloc(N * sizeof *a);
    for (int i = 0; i < N; i++)
        a[i] = i;
    long sum = 0;
    for (int p = 0; p < PASSES; p++)
        for (int i = 0; i < N; i++)
            sum += a[i] ^ p;
    free(a);
    return sum;
}

static long mandel(void)
{
    enum { W = 480, H = 320, ITER = 200 };
    unsigned char *img = malloc(W * H);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            double cr = -2.0 + 3.0 * x / W, ci = -1.5 + 3.0 * y / H;
            double zr = 0, zi = 0;
            int k = 0;
            while (k < ITER && zr * zr + zi * zi < 4.0) {
                double t = zr * zr - zi * zi + cr;
                zi = 2 * zr * zi + ci;
                zr = t;
                k++;
            }
            img[y * W + x] = (unsigned char)k;
        }
    long sum = 0;
    for (int i = 0; i < W * H; i++)
        sum += img[i];
    free(img);
    return sum;
}

static int cmp(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static long sort(void)
{
    enum { N = 1 << 18 };
    int *a = malloc(N * sizeof *a);
    unsigned s = 12345;
    for (int i = 0; i < N; i++) {
        s = s * 1103515245u + 12345u;
        a[i] = (int)(s >> 8);
    }
    qsort(a, N, sizeof *a, cmp);
    long sum = 0;
    for (int i = 0; i < N; i += 1024)
        sum += a[i];
    free(a);
    return sum;
}

int main(int argc, char **argv)
{
    static const struct { const char *name; long (*fn)(void); } w[] = {
        { "sweep", sweep }, { "mandel", mandel }, { "sort", sort },
    };
    for (size_t i = 0; argc > 1 && i < sizeof w / sizeof *w; i++)
        if (strcmp(argv[1], w[i].name) == 0) {
            printf("%s %ld\n", w[i].name, w[i].fn());
            return 0;
        }
    fprintf(stderr, "usage: rewrite_workloads sweep|mandel|sort\n");
    return 2;
}
