/*
 * origin_user.c - a program that finds its library through its run path
 * $ORIGIN/../lib (as java finds libjli.so) and finds itself and the
 * library by their paths (/proc/self/exe, dladdr), as java's launcher and
 * libjvm find their runtime.  Prints whether each path is where the
 * program lies.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int origin_value(void);

int main(int argc, char **argv)
{
    (void)argc;
    char self[PATH_MAX], want[PATH_MAX + 32], *real = realpath(argv[0], NULL);
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = '\0';
    printf("value: %d\n", origin_value());
    printf("/proc/self/exe: %s\n", real && strcmp(self, real) == 0 ? "the program" : self);
    Dl_info info;
    char *lib = dladdr((void *)origin_value, &info) ? realpath(info.dli_fname, NULL) : NULL;
    snprintf(want, sizeof want, "%s/../lib/liborigin_lib.so", dirname(self));
    char *expected = realpath(want, NULL);
    printf("dladdr: %s\n", lib && expected && strcmp(lib, expected) == 0 ? "the library"
                                                                      : info.dli_fname);
    free(expected);
    free(lib);
    free(real);
    return 0;
}
