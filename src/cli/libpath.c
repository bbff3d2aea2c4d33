/*
 * libpath.c - finds files: the shared objects the memtap command loads or
 * injects (libmemtap.so, DuckDB's library) beside its own executable, in
 * the build tree and in an installed, possibly moved, prefix alike; and a
 * program by its name, on PATH as the shell would.
 */
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cli_find_library(const char *env, const char *name, char *out,
                     size_t cap)
{
    const char *set = env ? getenv(env) : NULL;
    if (set && *set) {
        snprintf(out, cap, "%s", set);
        return access(out, R_OK) == 0 ? 0 : -1;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return -1;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    static const char *const rel[] = { "../lib", "../lib/memtap", "." };
    for (size_t i = 0; i < sizeof rel / sizeof *rel; i++) {
        if (snprintf(out, cap, "%s/%s/%s", exe, rel[i], name) >= (int)cap)
            continue;
        if (access(out, R_OK) == 0) {
            char *real = realpath(out, NULL);
            if (real) {
                snprintf(out, cap, "%s", real);
                free(real);
            }
            return 0;
        }
    }
    return -1;
}

int cli_find_program(const char *name, char *out, size_t cap)
{
    if (strchr(name, '/')) {
        snprintf(out, cap, "%s", name);
        return access(out, F_OK) == 0 ? 0 : -1;
    }
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        size_t len = strcspn(path, ":");
        snprintf(out, cap, "%.*s/%s", (int)len, path, name);
        if (access(out, X_OK) == 0)
            return 0;
        path += len + (path[len] == ':');
    }
    errno = ENOENT;
    return -1;
}
