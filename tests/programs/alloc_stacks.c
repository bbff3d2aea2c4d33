/*
 * alloc_stacks.c - allocations whose call stacks are known by
 * construction (it.alloc_stacks checks them against this file's lines
 * and against heaptrack):
 *   - 100 blocks of 24 bytes from make_node through the wrapper xmalloc,
 *     and 50 of 40 bytes from make_name through the same wrapper: one
 *     site for a one-frame view (xmalloc's call of malloc), two stacks;
 *   - 7 blocks of 64 bytes from recurse(depth 6 .. 0), each level's call
 *     a stack of its own (its depth of recurse frames);
 *   - one table of 1 MiB from make_table through xmalloc, live while the
 *     program sleeps 100 ms: the heap's peak (a sampling profiler sees it
 *     too), 2400 + 2000 + 448 + 1048576 bytes, the nodes, names and
 *     recursive blocks live then; freed after;
 *   - 2 threads, one after the other, each 30 blocks of 16 bytes from
 *     worker (the last freed before the next allocation: temporary);
 *   - leaked at exit: the 50 names and the 7 recursive blocks (50 * 40 +
 *     7 * 64 = 2448 bytes); all the rest freed.
 * With the argument "fork", a child forked after the 50th node makes the
 * other 50 through the same stack as the parent (the same call of the same
 * loop), then exits; the parent waits for it and goes on.
 * Built -O0 with frame pointers omitted: unwinding must use .eh_frame.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) static void *xmalloc(size_t n)
{
    void *p = malloc(n);
    if (!p)
        abort();
    return p;
}

__attribute__((noinline)) static void *make_node(void) { return xmalloc(24); }
__attribute__((noinline)) static void *make_name(void) { return xmalloc(40); }

__attribute__((noinline)) static void *make_table(void)
{
    return xmalloc(1 << 20);
}

static void *kept[8];

__attribute__((noinline)) static void recurse(int depth)
{
    kept[depth] = xmalloc(64);
    if (depth > 0)
        recurse(depth - 1);
}

static void *worker(void *arg)
{
    (void)arg;
    void *p[30];
    for (int i = 0; i < 30; i++)
        p[i] = malloc(16);
    for (int i = 0; i < 30; i++)
        free(p[i]);
    return NULL;
}

int main(int argc, char **argv)
{
    void *nodes[100];
    static void *names[50];
    int forking = argc > 1 && strcmp(argv[1], "fork") == 0;
    pid_t child = -1;
    for (int i = 0; i < 100; i++) {
        if (forking && i == 50)
            child = fork();
        nodes[i] = make_node();
    }
    if (child == 0)
        _exit(0);
    if (child > 0)
        waitpid(child, NULL, 0);
    for (int i = 0; i < 50; i++)
        names[i] = make_name();
    recurse(6);
    void *table = make_table();
    usleep(100 * 1000);
    free(table);
    for (int i = 0; i < 2; i++) { /* one after the other: the same order
                                     of events in every run */
        pthread_t t;
        pthread_create(&t, NULL, worker, NULL);
        pthread_join(t, NULL);
    }
    for (int i = 0; i < 100; i++)
        free(nodes[i]);
    puts(names[49] && kept[0] ? "done" : "lost");
    return 0;
}
