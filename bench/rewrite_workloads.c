/* rewrite_workloads.c - workloads for bench/rewrite.py: a memory-bound
 * sweep over a 16 MiB array, a CPU-bound Mandelbrot set, qsort of a
 * quarter million integers (calls through a function pointer), a walk
 * over a linked structure in random order (every access a dependent load
 * to a new line), and four threads updating private and shared arrays.
 * Each prints a checksum, so rewritten copies can be checked against the
 * original.  An optional second argument divides the walk's size and
 * steps (bench/engines.py runs the fault engine on a smaller walk). */
#include <pthread.h>
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

typedef struct node {
    struct node *next;
    long value;
} node;

static unsigned scale = 1;

static long walk(void)
{
    const unsigned N = (1u << 20) / scale, STEPS = (8u << 20) / scale;
    node *nodes = malloc(N * sizeof *nodes);
    unsigned *order = malloc(N * sizeof *order);
    for (unsigned i = 0; i < N; i++)
        order[i] = i;
    unsigned s = 777;
    for (unsigned i = N - 1; i > 0; i--) { /* one cycle through all */
        s = s * 1103515245u + 12345u;
        unsigned j = (s >> 8) % (i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (unsigned i = 0; i < N; i++) {
        nodes[order[i]].next = &nodes[order[(i + 1) % N]];
        nodes[order[i]].value = i;
    }
    long sum = 0;
    const node *p = &nodes[order[0]];
    for (long k = 0; k < STEPS; k++) {
        sum += p->value;
        p = p->next;
    }
    free(order);
    free(nodes);
    return sum;
}

enum { THREADS = 4, CELLS = 1 << 16 };
static int rounds = 48; /* threads_long: three times as many */
static long shared_cells[CELLS];
static volatile long shared_seen; /* racy reads: kept, never printed */

static void *worker(void *arg)
{
    long id = (long)arg, sum = 0, seen = 0;
    long *mine = calloc(CELLS, sizeof *mine);
    for (int r = 0; r < rounds; r++)
        for (int i = 0; i < CELLS; i++) {
            mine[i] += i ^ r;
            sum += mine[i];
            seen += shared_cells[(i * 7 + id) % CELLS];
            if (i % 64 == id)
                __atomic_fetch_add(&shared_cells[i], 1, __ATOMIC_RELAXED);
        }
    shared_seen += seen;
    free(mine);
    return (void *)sum;
}

static long threads(void);

/* The threads workload three times over: a trace of 100 M records and
 * more, for the readers' flat memory (bench/read.py). */
static long threads_long(void)
{
    rounds *= 3;
    return threads();
}

static long threads(void)
{
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    long sum = 0;
    for (int i = 0; i < THREADS; i++) {
        void *r;
        pthread_join(t[i], &r);
        sum += (long)r;
    }
    for (int i = 0; i < CELLS; i++)
        sum += shared_cells[i];
    return sum;
}

int main(int argc, char **argv)
{
    static const struct { const char *name; long (*fn)(void); } w[] = {
        { "sweep", sweep }, { "mandel", mandel }, { "sort", sort },
        { "walk", walk }, { "threads", threads },
        { "threads_long", threads_long },
    };
    if (argc > 2 && atoi(argv[2]) > 0 && atoi(argv[2]) <= 1024)
        scale = (unsigned)atoi(argv[2]);
    for (size_t i = 0; argc > 1 && i < sizeof w / sizeof *w; i++)
        if (strcmp(argv[1], w[i].name) == 0) {
            printf("%s %ld\n", w[i].name, w[i].fn());
            return 0;
        }
    fprintf(stderr,
            "usage: rewrite_workloads sweep|mandel|sort|walk|threads\n");
    return 2;
}
