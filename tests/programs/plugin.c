/* A library for dlopener: one allocation from a known function. */
#include <stdlib.h>

void *plugin_make(void)
{
    void *p = malloc(77);
    return p;
}
