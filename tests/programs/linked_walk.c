/* A list of 1000 nodes, one malloc each, built and then walked 10 times:
 * each instruction's access is in another node (heap block) than its
 * access before, so `memtap report` calls the nodes' site's pattern
 * "block to block" (the one pattern of pointer-linked structures). */
#include <stdio.h>
#include <stdlib.h>

struct node {
    struct node *next;
    long value;
};

int main(void)
{
    struct node *head = NULL;
    for (long i = 0; i < 1000; i++) {
        struct node *n = malloc(sizeof *n);
        if (!n)
            return 1;
        n->value = i;
        n->next = head;
        head = n;
    }
    long sum = 0;
    for (int round = 0; round < 10; round++)
        for (const struct node *n = head; n; n = n->next)
            sum += n->value;
    printf("%ld\n", sum);
    return 0;
}
