/*
 * nodeps_lib.c - a library that needs no other, not even the C library
 * (linked with -nostdlib, its DT_INIT nodeps_init): as a dependency of
 * nodeps_mid, the loader initializes it before the C library (as
 * libicudata under libicuuc, clang-14's).
 */
const int nodeps_table[4] = { 3, 5, 7, 9 };
static int ready;

void nodeps_init(void);
int nodeps_ready(void);

void nodeps_init(void)
{
    ready = 1;
}

int nodeps_ready(void)
{
    return ready;
}
