/*
 * wait_signals.c - system calls that block until a signal's handler runs,
 * as programs wait for children and timers: each must come back as the
 * kernel brings it back, with the handler run first.
 *   pselect: SIGCHLD blocked, pselect6 with an empty mask waits on a pipe
 *     that never gets data while a child exits (make -j's jobserver wait):
 *     -1 EINTR, the handler ran.
 *   read: a read on an empty pipe, SIGALRM every 20 ms, a handler without
 *     SA_RESTART: -1 EINTR.
 *   restart: the same with SA_RESTART, the handler tells a child to write
 *     5 bytes: the read is made again and returns them.
 *   poll: poll with no timeout, SA_RESTART: -1 EINTR all the same (the
 *     kernel never restarts poll after a handler).
 *   nanosleep: 10 s, interrupted: -1 EINTR, the time left written, below
 *     10 s.
 *   heap read: a read into a heap block while another thread waits (the
 *     fault engine makes it through a buffer of its own then), SA_RESTART,
 *     the handler tells a child to write: the bytes, in the block.
 * Prints one line per call.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t ran;
static int go_fd = -1; /* the restart case's child waits on it */

static void on_signal(int sig)
{
    (void)sig;
    ran++;
    if (go_fd >= 0 && write(go_fd, "g", 1) == 1)
        go_fd = -1;
}

static void handle(int sig, int flags)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = flags;
    sigaction(sig, &sa, NULL);
}

static void ticks(long ms)
{
    struct itimerval t = { { 0, ms * 1000 }, { 0, ms * 1000 } };
    setitimer(ITIMER_REAL, &t, NULL);
}

static const char *said(long ret)
{
    return ret < 0 ? strerror(errno) : "no error";
}

static void wait_for_child(void)
{
    int p[2];
    sigset_t chld, empty;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigemptyset(&empty);
    handle(SIGCHLD, 0);
    sigprocmask(SIG_BLOCK, &chld, NULL);
    if (pipe(p) != 0)
        return;
    pid_t child = fork();
    if (child == 0)
        _exit(0);
    ran = 0;
    fd_set rd;
    FD_ZERO(&rd);
    FD_SET(p[0], &rd);
    int ret = pselect(p[0] + 1, &rd, NULL, NULL, NULL, &empty);
    printf("pselect: %d, %s, handler ran: %s\n", ret, said(ret), ran ? "yes" : "no");
    waitpid(child, NULL, 0);
    sigprocmask(SIG_UNBLOCK, &chld, NULL);
    close(p[0]);
    close(p[1]);
}

static void read_interrupted(void)
{
    int p[2];
    char c;
    if (pipe(p) != 0)
        return;
    handle(SIGALRM, 0);
    ran = 0;
    ticks(20);
    long ret = read(p[0], &c, 1);
    ticks(0);
    printf("read: %ld, %s, handler ran: %s\n", ret, said(ret), ran ? "yes" : "no");
    close(p[0]);
    close(p[1]);
}

/* Reads up to n bytes of a pipe into buf while SIGALRM (SA_RESTART) ticks,
 * its handler telling a child to write the 5 bytes of msg into the pipe
 * (so the read is interrupted first): the read's result. */
static long read_after_handler(char *buf, size_t n, const char *msg)
{
    int data[2], go[2];
    if (pipe(data) != 0 || pipe(go) != 0)
        return -2;
    pid_t child = fork();
    if (child == 0) {
        char g;
        if (read(go[0], &g, 1) == 1 && write(data[1], msg, 5) == 5)
            _exit(0);
        _exit(1);
    }
    handle(SIGALRM, SA_RESTART);
    ran = 0;
    go_fd = go[1];
    ticks(20);
    long ret = read(data[0], buf, n);
    ticks(0);
    waitpid(child, NULL, 0);
    return ret;
}

static void read_restarted(void)
{
    char buf[8];
    long ret = read_after_handler(buf, sizeof buf, "hello");
    printf("restart: %ld, %s, handler ran: %s\n", ret, said(ret), ran ? "yes" : "no");
}

static void poll_interrupted(void)
{
    int p[2];
    if (pipe(p) != 0)
        return;
    handle(SIGALRM, SA_RESTART);
    ran = 0;
    ticks(20);
    struct pollfd f = { p[0], POLLIN, 0 };
    int ret = poll(&f, 1, -1);
    ticks(0);
    printf("poll: %d, %s, handler ran: %s\n", ret, said(ret), ran ? "yes" : "no");
}

static void sleep_interrupted(void)
{
    handle(SIGALRM, SA_RESTART);
    ran = 0;
    ticks(20);
    struct timespec want = { 10, 0 }, left = { -1, 0 };
    int ret = nanosleep(&want, &left);
    ticks(0);
    printf("nanosleep: %d, %s, handler ran: %s, left below 10 s: %s\n", ret, said(ret),
           ran ? "yes" : "no", left.tv_sec >= 0 && left.tv_sec < 10 ? "yes" : "no");
}

static void *wait_for_main(void *p)
{
    sigset_t alarm; /* the main thread's to take */
    sigemptyset(&alarm);
    sigaddset(&alarm, SIGALRM);
    pthread_sigmask(SIG_BLOCK, &alarm, NULL);
    char c;
    return read(*(int *)p, &c, 1) == 1 ? NULL : p;
}

static void heap_read_restarted(void)
{
    int stop[2];
    pthread_t other;
    if (pipe(stop) != 0 || pthread_create(&other, NULL, wait_for_main, &stop[0]) != 0)
        return;
    char *buf = malloc(64);
    long ret = read_after_handler(buf, 64, "heap!");
    printf("heap read: %ld, %s, handler ran: %s, got: %.5s\n", ret, said(ret),
           ran ? "yes" : "no", ret == 5 ? buf : "-");
    if (write(stop[1], "s", 1) == 1)
        pthread_join(other, NULL);
    free(buf);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    wait_for_child();
    read_interrupted();
    read_restarted();
    poll_interrupted();
    sleep_interrupted();
    heap_read_restarted();
    return 0;
}
