/*
 * one_thread.c - a program with one thread looks at its threads as
 * chromium's zygote does before it forks (the links of /proc/self/task:
 * three with one thread) after enough accesses to fill many of memtap's
 * buffers; prints the threads it sees and the link count.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

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
    free(v);
    return 0;
}
