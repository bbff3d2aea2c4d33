/*
 * one_thread.c - a program with one thread looks at its threads as
 * chromium's zygote does before it forks (the links of /proc/self/task:
 * three with one thread) after enough accesses to fill many of memtap's
 * buffers; prints the threads it sees and the link count, then forks a
 * child and waits for any child twice: the first wait must return that
 * child, the second find none (memtap's writer is no child a wait sees).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
    int *v = malloc(4096 * sizeof *v);
    if (!v)
        return 2;
    for (int round = 0; round < 50; round++)
        for (int i = 0; i < 4096; i++)
            v[i] += i;
    DIR *d = opendir("/proc/self/task");
    struct stat st;
    if (!d || stat("/proc/self/task", &st) != 0)
        return 3;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    printf("threads %d, links %lu\n", n, (unsigned long)st.st_nlink);
    fflush(stdout);
    pid_t child = fork();
    if (child == 0)
        _exit(7);
    int status;
    pid_t first = wait(&status);
    pid_t second = wait(&status);
    printf("wait: %s, then %s\n", first == child ? "the child" : "another",
           second < 0 && errno == ECHILD ? "none" : "another");
    free(v);
    return 0;
}
