/* A linked list of structures reached through pointers. */
#include <stdlib.h>

struct node {
    int key;
    double weight;
    struct node *next;
};

int main(void)
{
    struct node *head = NULL;
    for (int i = 0; i < 200; i++) {
        struct node *n = malloc(sizeof *n);
        if (!n)
            return 1;
        n->key = i;
        n->weight = i * 0.5;
        n->next = head;
        head = n;
    }
    double total = 0;
    for (struct node *n = head; n; n = n->next)
        if (n->key % 2)
            total += n->weight;
    while (head) {
        struct node *next = head->next;
        free(head);
        head = next;
    }
    return total < 0;
}
