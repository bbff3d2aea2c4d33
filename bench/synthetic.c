/*
 * synthetic.c - the synthetic workloads of the MadT evaluation (Table IV)
 * plus a memory-intensive kernel, one per run: "synthetic WORKLOAD".
 *   calloc      allocate and release zeroed blocks
 *   realloc     grow a buffer by doubling
 *   read        read a file into a heap buffer
 *   mmap        map, touch and unmap anonymous memory
 *   fwrite      write a heap buffer through stdio
 *   mandelbrot  compute-bound: registers only, one store per pixel
 *   kernel      memory-bound: sums over a heap array (ACCESSES loads)
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define KERNEL_ACCESSES 100000

static int do_calloc(void)
{
    long sum = 0;
    for (int i = 0; i < 20; i++) {
        char *p = calloc(1, 64 * 1024);
        if (!p)
            return 1;
        sum += p[i];
        free(p);
    }
    return (int)sum;
}

static int do_realloc(void)
{
    for (int r = 0; r < 20; r++) {
        char *p = NULL;
        for (size_t n = 16; n <= (256u << 10); n *= 2) {
            char *q = realloc(p, n);
            if (!q)
                return 1;
            p = q;
        }
        free(p);
    }
    return 0;
}

static int do_read(void)
{
    size_t chunk = 64 * 1024;
    char *buf = malloc(chunk);
    int fd = open("/dev/zero", O_RDONLY);
    if (!buf || fd < 0)
        return 1;
    for (int i = 0; i < 8; i++)
        if (read(fd, buf, chunk) != (ssize_t)chunk)
            return 1;
    close(fd);
    free(buf);
    return 0;
}

static int do_mmap(void)
{
    for (int i = 0; i < 200; i++) {
        char *m = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            return 1;
        m[0] = 1;
        munmap(m, 1 << 20);
    }
    return 0;
}

static int do_fwrite(void)
{
    size_t chunk = 64 * 1024;
    char *buf = malloc(chunk);
    FILE *f = fopen("/dev/null", "w");
    if (!buf || !f)
        return 1;
    memset(buf, 'z', chunk);
    for (int i = 0; i < 8; i++)
        if (fwrite(buf, 1, chunk, f) != chunk)
            return 1;
    fclose(f);
    free(buf);
    return 0;
}

static int do_mandelbrot(void)
{
    enum { W = 100, H = 100, ITER = 100 };
    unsigned char *img = malloc(W * H);
    if (!img)
        return 1;
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
    int r = img[W * H / 2];
    free(img);
    return r == 255;
}

static int do_kernel(void)
{
    enum { N = 4096 };
    int *a = malloc(N * sizeof *a);
    if (!a)
        return 1;
    for (int i = 0; i < N; i++)
        a[i] = i;
    long sum = 0;
    for (int k = 0; k < KERNEL_ACCESSES - N; k++)
        sum += a[(k * 7) % N];
    free(a);
    return sum == 42;
}

int main(int argc, char **argv)
{
    static const struct { const char *name; int (*fn)(void); } w[] = {
        { "calloc", do_calloc },   { "realloc", do_realloc },
        { "read", do_read },       { "mmap", do_mmap },
        { "fwrite", do_fwrite },   { "mandelbrot", do_mandelbrot },
        { "kernel", do_kernel },
    };
    for (size_t i = 0; argc > 1 && i < sizeof w / sizeof *w; i++)
        if (strcmp(argv[1], w[i].name) == 0)
            return w[i].fn() ? 1 : 0;
    fprintf(stderr, "usage: synthetic calloc|realloc|read|mmap|fwrite|"
                    "mandelbrot|kernel\n");
    return 2;
}
