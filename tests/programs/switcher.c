/*
 * switcher.c - control flow for the static analysis tests: dense switches
 * (compiled to jump tables), function pointers, loops and recursion.  The
 * case bodies are reachable only through the tables.
 */
#include <stdio.h>
#include <stdlib.h>

static int table[64];

__attribute__((noinline)) static int dispatch(int op, int x)
{
    switch (op) {
    case 0: return x + table[1];
    case 1: return x * 3 + table[x & 63];
    case 2: return x ^ 0x55;
    case 3: table[x & 63] = x; return 7;
    case 4: return x - table[(x * 7) & 63];
    case 5: return x << 2;
    case 6: return table[(x + 9) & 63] * x;
    case 7: return -x;
    case 8: return x % 13 + table[3];
    default: return 0;
    }
}

__attribute__((noinline)) static const char *name(unsigned k)
{
    switch (k) {
    case 10: return "ten";
    case 11: return "eleven";
    case 12: return "twelve";
    case 13: return "thirteen";
    case 14: return "fourteen";
    case 15: return "fifteen";
    case 16: return "sixteen";
    default: return "other";
    }
}

static int twice(int v) { return 2 * v; }
static int square(int v) { return v * v; }

__attribute__((noinline)) static int fib(int n)
{
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

int main(int argc, char **argv)
{
    int (*fns[2])(int) = {twice, square};
    int acc = argc;
    for (int i = 0; i < 64; i++)
        table[i] = i * i;
    for (int i = 0; i < 100; i++)
        acc += dispatch(i % 10, acc & 1023) + fns[i & 1](i);
    printf("%d %s %d\n", acc, name(argc + 9 + (argv[0][0] == 0)), fib(10));
    return 0;
}
