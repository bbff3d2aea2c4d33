/*
 * sys/own_modules.h - the modules that are memtap's, never the program's:
 * the preload library and the libraries its handlers use, and the dynamic
 * loader.  Neither engine traces them: the fault engine never protects
 * their memory, the static engine never rewrites them.
 */
#ifndef MEMTAP_SYS_OWN_MODULES_H
#define MEMTAP_SYS_OWN_MODULES_H

#include <string.h>

/* Whether a module's file name (its last path component) is memtap's. */
static inline int own_module(const char *base)
{
    static const char *const own[] = { "libmemtap.so", "libmemtap-audit.so",
                                       "libzstd.so", "libZydis.so",
                                       "libZycore.so", "ld-linux" };
    for (size_t i = 0; i < sizeof own / sizeof *own; i++)
        if (strncmp(base, own[i], strlen(own[i])) == 0)
            return 1;
    return 0;
}

#endif
