/* Starts itself as a child in the four ways that go through glibc's
 * posix_spawn (system, popen, posix_spawn, posix_spawnp), with its
 * arguments and environment in the heap.  Each child allocates a block of
 * 1000+N bytes, prints "child N" and exits with N.  After each child the
 * parent stores to `after_child` once, so a trace shows whether the
 * parent is still traced once a child has gone. */
#define _GNU_SOURCE
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;
volatile int after_child;

static int child(int n)
{
    char *p = malloc(1000 + (size_t)n);
    memset(p, n, 1000 + (size_t)n);
    printf("child %d %s\n", n, getenv("SPAWNER_TAG") ? getenv("SPAWNER_TAG") : "-");
    free(p);
    return n;
}

static int status_of(int st)
{
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int by_spawn(const char *self, int n, int search)
{
    char num[16];
    snprintf(num, sizeof num, "%d", n);
    char *argv[] = { strdup(self), strdup("child"), strdup(num), NULL };
    pid_t pid;
    int rc = search ? posix_spawnp(&pid, self, NULL, NULL, argv, environ)
                    : posix_spawn(&pid, self, NULL, NULL, argv, environ);
    for (int i = 0; argv[i]; i++)
        free(argv[i]);
    if (rc != 0)
        return -rc;
    int st;
    waitpid(pid, &st, 0);
    return status_of(st);
}

static int by_shell(const char *self, int n, int pipe_it)
{
    char *cmd;
    if (asprintf(&cmd, "'%s' child %d", self, n) < 0)
        return -1;
    int st;
    if (pipe_it) {
        FILE *f = popen(cmd, "r");
        char line[64] = "";
        if (!f || !fgets(line, sizeof line, f))
            return -1;
        printf("popen read: %s", line);
        st = pclose(f);
    } else {
        fflush(stdout);
        st = system(cmd);
    }
    free(cmd);
    return status_of(st);
}

int main(int argc, char **argv)
{
    if (argc > 2 && strcmp(argv[1], "child") == 0)
        return child(atoi(argv[2]));
    setenv("SPAWNER_TAG", "tag", 1); /* environ moves to the heap */
    const char *how = argc > 1 ? argv[1] : "all";
    char *self = realpath("/proc/self/exe", NULL);
    int failures = 0;
    struct { const char *name; int n; } ways[] = {
        { "system", 11 }, { "popen", 12 }, { "spawn", 13 }, { "spawnp", 14 },
    };
    for (size_t i = 0; i < sizeof ways / sizeof *ways; i++) {
        if (strcmp(how, "all") != 0 && strcmp(how, ways[i].name) != 0)
            continue;
        int n = ways[i].n, got;
        if (strcmp(ways[i].name, "system") == 0)
            got = by_shell(self, n, 0);
        else if (strcmp(ways[i].name, "popen") == 0)
            got = by_shell(self, n, 1);
        else
            got = by_spawn(self, n, strcmp(ways[i].name, "spawnp") == 0);
        after_child++;
        printf("%s: %d\n", ways[i].name, got);
        failures += got != n;
    }
    free(self);
    return failures;
}
