/* THREADS threads (argv[1], default 64) each allocate a block of 2000
 * longs, store to every element and load every element back (4000 heap
 * accesses each), then (given a FILE, argv[2]) read that file into the
 * block with one read(2), and free it, all while the others run: under the
 * fault engine every one of THREADS * 4000 accesses and THREADS reads must
 * be recorded and no window exposed.  With a third argument "vector" the
 * read is a readv(2) into the block's first 2000 bytes and the rest, the
 * block's first 100 and next 200 bytes are then written to /dev/null
 * with one writev(2), and its 50 bytes at 300 go through a socket pair by
 * sendmsg(2) to land at 400 by recvmsg(2). */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#define ELEMENTS 2000

static const char *file;
static int vector;

/* Sends block's 50 bytes at 300 through a socket pair into its bytes at
 * 400 with sendmsg and recvmsg: 1 when they arrived. */
static int through_socket(char *block)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        return 0;
    struct iovec out = { block + 300, 50 }, in = { block + 400, 50 };
    struct msghdr m;
    memset(&m, 0, sizeof m);
    m.msg_iov = &out;
    m.msg_iovlen = 1;
    int ok = sendmsg(sv[0], &m, 0) == 50;
    m.msg_iov = &in;
    ok = ok && recvmsg(sv[1], &m, 0) == 50 &&
         memcmp(block + 300, block + 400, 50) == 0;
    close(sv[0]);
    close(sv[1]);
    return ok;
}

/* Reads fd into block (bytes): 1 when something was read. */
static int read_into(int fd, char *block, size_t bytes)
{
    if (!vector)
        return read(fd, block, bytes) > 0;
    struct iovec in[2] = { { block, 2000 }, { block + 2000, bytes - 2000 } };
    if (readv(fd, in, 2) <= 0)
        return 0;
    int out = open("/dev/null", O_WRONLY);
    struct iovec from[2] = { { block, 100 }, { block + 100, 200 } };
    ssize_t n = out >= 0 ? writev(out, from, 2) : -1;
    if (out >= 0)
        close(out);
    return n == 300 && through_socket(block);
}

static void *work(void *arg)
{
    volatile long *block = malloc(ELEMENTS * sizeof *block);
    long sum = 0;
    if (!block)
        return arg;
    for (int i = 0; i < ELEMENTS; i++)
        block[i] = i;
    for (int i = 0; i < ELEMENTS; i++)
        sum += block[i];
    int fd = file ? open(file, O_RDONLY) : -1;
    if (fd >= 0) {
        if (!read_into(fd, (char *)block, ELEMENTS * sizeof *block))
            sum = -1;
        close(fd);
    }
    free((void *)block);
    return sum == (long)ELEMENTS * (ELEMENTS - 1) / 2 ? NULL : arg;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 64;
    file = argc > 2 ? argv[2] : NULL;
    vector = argc > 3 && strcmp(argv[3], "vector") == 0;
    pthread_t *t = calloc((size_t)n, sizeof *t);
    int bad = 0;
    if (!t || n < 1)
        return 2;
    for (int i = 0; i < n; i++)
        if (pthread_create(&t[i], NULL, work, t) != 0)
            return 2;
    for (int i = 0; i < n; i++) {
        void *r;
        pthread_join(t[i], &r);
        bad += r != NULL;
    }
    free(t);
    printf("%d threads, %d wrong\n", n, bad);
    return bad != 0;
}
