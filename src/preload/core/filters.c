/*
 * filters.c - the recorder's filter stage (filters.h): a short list
 * written at start, read on every record.
 */
#include "filters.h"

#define FILTERS_MAX 4

static struct {
    filter_keeps_fn keeps[FILTERS_MAX];
    int n;
} st;

int filters_add(filter_keeps_fn keeps)
{
    if (st.n == FILTERS_MAX)
        return -1;
    st.keeps[st.n++] = keeps;
    return 0;
}

int filters_on(void) { return st.n != 0; }

int filters_keep(uint8_t kind, uint64_t addr, uint64_t size, uint64_t addr2)
{
    for (int i = 0; i < st.n; i++)
        if (!st.keeps[i](kind, addr, size, addr2))
            return 0;
    return 1;
}
