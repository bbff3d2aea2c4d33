/* Shuffles an array by swaps and links nodes in its order (compiled -O2):
 * loops where an address is used twice with another access between, so
 * the second use is elided after that access (memtap_site.due); and
 * stamp (swaps_asm.S), where a string operation lies between two uses.  About
 * 100,000 entries: many entry buffers and chunks, cut anywhere (the
 * shuffle logs four entries a step, which 4095-entry buffers do not
 * divide into).*/
#include <stdio.h>
#include <stdlib.h>

long stamp(long *r, const long *src, long *dst);

typedef struct node {
    struct node *next;
    long value;
} node;

int main(void)
{
    enum { N = 12000 };
    unsigned *order = malloc(N * sizeof *order);
    node *nodes = malloc(N * sizeof *nodes);
    if (!order || !nodes)
        return 1;
    for (unsigned i = 0; i < N; i++)
        order[i] = i;
    static unsigned seen[64], hits[32];
    unsigned s = 12345;
    for (unsigned i = N - 1; i > 0; i--) {
        s = s * 1103515245u + 12345u;
        unsigned j = (s >> 8) % (i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
        seen[i & 63] += j;
        hits[j & 31]++;
    }
    for (unsigned i = 0; i < N; i++) {
        nodes[order[i]].next = &nodes[order[(i + 1) % N]];
        nodes[order[i]].value = i;
    }
    long sum = 0;
    const node *p = &nodes[order[0]];
    for (unsigned k = 0; k < N; k++) {
        sum += p->value * (k & 7);
        p = p->next;
    }
    long r[2], src[4] = { 3, 4, 5, 6 }, dst[4];
    for (int k = 0; k < 3; k++)
        sum += stamp(r, src, dst) + r[1] + dst[k];
    printf("%ld %u %u\n", sum, seen[5], hits[7]);
    free(nodes);
    free(order);
    return 0;
}
