/* The cache misses of struct fields, counted by hand for a 32 KiB 8-way
 * first level with 64-byte lines (LRU): `recs`, 1024 records of one line
 * each (64 KiB), read twice in order, first each record's `key` (its
 * first bytes), then its `hits` (its last): each pass misses every line
 * at `key` (the walk is twice the cache) and never at `hits`, which the
 * same line holds: recs[].key 2048 misses of 2048 accesses, recs[].hits
 * none of 2048.  Then a list of 1024 heap nodes of one line each, each
 * written and twice read at `hits` then at `next`: whatever the misses
 * (where the allocator puts the nodes decides), they are all at `hits`,
 * none at `next`, 3072 accesses each. */
#include <stdio.h>
#include <stdlib.h>

#define LINE 64
struct rec {
    long key;
    long pad[6];
    long hits;
};
struct node {
    volatile long hits;
    long pad[6];
    struct node *volatile next;
};
/* volatile: read as written, in that order */
static volatile struct rec recs[1024] __attribute__((aligned(LINE)));

int main(void)
{
    long sum = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < 1024; i++) {
            sum += recs[i].key;
            sum += recs[i].hits;
        }
    struct node *head = NULL;
    for (int i = 0; i < 1024; i++) {
        struct node *n = aligned_alloc(LINE, sizeof *n); /* a line each */
        if (!n)
            return 1;
        n->hits = i;
        n->next = head;
        head = n;
    }
    for (int pass = 0; pass < 2; pass++)
        for (struct node *n = head; n; n = n->next)
            sum += n->hits;
    printf("%ld\n", sum);
    return 0;
}
