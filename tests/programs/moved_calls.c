/*
 * moved_calls.c - system calls whose arguments lie in the heap while a
 * second thread runs: stat, open and readlink of a path in the heap, into
 * heap buffers; getrandom, pipe2, poll, nanosleep, uname, epoll_ctl and
 * epoll_wait, select, ppoll, ioctl(FIONREAD) and fcntl's F_SETLK and
 * F_GETLK on heap memory.  Prints what each gave back; the same natively
 * and under memtap.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

static atomic_int stop;
static volatile long *spun;

/* runs beside every call below: the world is shared */
static void *spinner(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop))
        spun[0]++;
    return NULL;
}

int main(int argc, char **argv)
{
    (void)argc;
    spun = calloc(1, sizeof *spun);
    pthread_t t;
    if (!spun || pthread_create(&t, NULL, spinner, NULL) != 0)
        return 1;
    char *path = strdup(argv[0]);
    struct stat *st = malloc(sizeof *st), *fst = malloc(sizeof *fst);
    int fd = open(path, O_RDONLY);
    int same = stat(path, st) == 0 && fd >= 0 && fstat(fd, fst) == 0 &&
               st->st_ino == fst->st_ino && st->st_size == fst->st_size &&
               st->st_size > 0;
    printf("stat: %s\n", same ? "same file" : "differs");
    char *link = malloc(4096), *self = strdup("/proc/self/exe");
    ssize_t n = readlink(self, link, 4096);
    char *real = realpath(argv[0], NULL);
    printf("readlink: %s\n", n > 0 && real && (size_t)n == strlen(real) &&
                                     memcmp(link, real, (size_t)n) == 0
                                 ? "the program"
                                 : "differs");
    unsigned char *r = calloc(64, 1);
    int nonzero = 0;
    if (getrandom(r, 64, 0) == 64)
        for (int i = 0; i < 64; i++)
            nonzero += r[i] != 0;
    printf("getrandom: %s\n", nonzero > 32 ? "filled" : "empty");
    int *p = malloc(2 * sizeof *p);
    struct pollfd *pf = malloc(sizeof *pf);
    char got = 0;
    if (pipe2(p, O_CLOEXEC) == 0 && write(p[1], "x", 1) == 1) {
        pf->fd = p[0];
        pf->events = POLLIN;
        pf->revents = 0;
        if (poll(pf, 1, 1000) == 1 && (pf->revents & POLLIN) &&
            read(p[0], &got, 1) != 1)
            got = 0;
    }
    printf("pipe2 and poll: %c\n", got ? got : '-');
    struct timespec *req = malloc(2 * sizeof *req), *rem = req + 1;
    req->tv_sec = 0;
    req->tv_nsec = 1000000;
    memset(rem, 0x5a, sizeof *rem); /* the kernel leaves it alone */
    unsigned char want[sizeof *rem];
    memset(want, 0x5a, sizeof want);
    printf("nanosleep: %d, rem %s\n", nanosleep(req, rem),
           memcmp(rem, want, sizeof want) == 0 ? "untouched" : "written");
    struct utsname *u = malloc(sizeof *u);
    printf("uname: %s\n", uname(u) == 0 ? u->sysname : "failed");
    /* the pipe readable again: epoll, select and ppoll each see it */
    if (write(p[1], "y", 1) != 1)
        return 1;
    struct epoll_event *ev = malloc(5 * sizeof *ev), *out = ev + 1;
    memset(out, 0x5a, 4 * sizeof *out); /* the kernel writes one event */
    int ep = epoll_create1(EPOLL_CLOEXEC);
    ev->events = EPOLLIN;
    ev->data.u64 = 0x1234;
    int waited = ep >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, p[0], ev) == 0
                     ? epoll_wait(ep, out, 4, 1000) : -1;
    unsigned char rest[3 * sizeof *out];
    memset(rest, 0x5a, sizeof rest);
    printf("epoll: %d, data %#llx, rest %s\n", waited,
           waited == 1 ? (unsigned long long)out->data.u64 : 0ull,
           memcmp(out + 1, rest, sizeof rest) == 0 ? "untouched" : "written");
    fd_set *rd = malloc(sizeof *rd);
    struct timeval *tv = malloc(sizeof *tv);
    FD_ZERO(rd);
    FD_SET(p[0], rd);
    tv->tv_sec = 1;
    tv->tv_usec = 0;
    int sel = select(p[0] + 1, rd, NULL, NULL, tv);
    printf("select: %d, %s\n", sel, sel == 1 && FD_ISSET(p[0], rd) ? "readable" : "not");
    struct timespec *ts = malloc(sizeof *ts);
    ts->tv_sec = 1;
    ts->tv_nsec = 0;
    pf->fd = p[0];
    pf->events = POLLIN;
    pf->revents = 0;
    int pp = ppoll(pf, 1, ts, NULL);
    printf("ppoll: %d, %s\n", pp, pp == 1 && (pf->revents & POLLIN) ? "readable" : "not");
    int *queued = malloc(sizeof *queued);
    *queued = -1;
    if (ioctl(p[0], FIONREAD, queued) != 0)
        *queued = -1;
    printf("ioctl FIONREAD: %d byte\n", *queued);
    /* a read lock on the program's file, then the question whether a
     * write lock could be had (the process's own locks do not stand in
     * its way) */
    struct flock *lk = malloc(sizeof *lk);
    memset(lk, 0, sizeof *lk);
    lk->l_type = F_RDLCK;
    lk->l_whence = SEEK_SET;
    int set = fcntl(fd, F_SETLK, lk);
    lk->l_type = F_WRLCK;
    int asked = fcntl(fd, F_GETLK, lk);
    printf("fcntl F_GETLK: %s, F_SETLK: %d\n",
           asked == 0 && lk->l_type == F_UNLCK ? "unlocked" : "locked", set);
    atomic_store(&stop, 1);
    pthread_join(t, NULL);
    return 0;
}
