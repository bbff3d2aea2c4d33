/*
 * exposed_call.c - uname(2) into a heap block, then an ioctl request no
 * file knows (0x5499, in the terminal's range) on a pipe with another heap
 * block, while a second thread is alive (blocked on a pipe): the fault
 * engine makes uname on a buffer of its own (its size is known) but runs
 * the ioctl, whose argument's size it cannot know, with the block's page
 * open, a window the other thread could have run into (the kernel's
 * ENOTTY comes only after).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/utsname.h>
#include <unistd.h>

static int pipe_fds[2], ready_fds[2];

/* Says it runs (registered with memtap by then), then waits. */
static void *idle(void *arg)
{
    char c = 'r';
    if (write(ready_fds[1], &c, 1) != 1)
        return arg;
    return read(pipe_fds[0], &c, 1) == 1 ? NULL : arg;
}

int main(void)
{
    pthread_t t;
    char c;
    if (pipe(pipe_fds) != 0 || pipe(ready_fds) != 0 ||
        pthread_create(&t, NULL, idle, NULL) != 0 ||
        read(ready_fds[0], &c, 1) != 1)
        return 1;
    struct utsname *u = malloc(sizeof *u);
    if (!u)
        return 1;
    u->sysname[0] = 0;
    int rc = uname(u);
    printf("uname: %d, %s\n", rc, u->sysname);
    int *queued = malloc(sizeof *queued);
    if (!queued)
        return 1;
    *queued = -1;
    rc = ioctl(ready_fds[0], 0x5499, queued);
    printf("ioctl: %d, %s, %d\n", rc, rc == -1 && errno == ENOTTY ? "ENOTTY" : "?", *queued);
    if (write(pipe_fds[1], "x", 1) != 1 || pthread_join(t, NULL) != 0)
        return 1;
    free(queued);
    free(u);
    return 0;
}
